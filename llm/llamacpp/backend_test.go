package llamacpp

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/llm"
)

// TestBackends: the best CPU backend beside the prebuilt libllama is loaded and named (its library
// variant), and LibDir is that directory.
func TestBackends(t *testing.T) {
	bs, err := Backends()
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) == 0 || bs[0].Name != "CPU" || !strings.HasPrefix(bs[0].Detail, "libggml-cpu-") {
		t.Fatalf("backends %v, want the CPU one with its libggml-cpu-* variant", bs)
	}
	if _, err := os.Stat(filepath.Join(LibDir(), bs[0].Detail)); err != nil {
		t.Errorf("the CPU variant is not in LibDir: %v", err)
	}
	if d := describeBackend(nil, 0); !strings.Contains(d, "llama.cpp "+Release) || !strings.Contains(d, "; CPU "+bs[0].Detail) {
		t.Errorf("describeBackend = %q", d)
	}
}

// TestNoGPU: asking for a GPU that cannot be had is one error naming what is missing and how to get
// it, never the CPU: the CUDA backend not installed, a CUDA library it needs missing (a stand-in
// libggml-cuda.so that needs libcudart.so.13, loaded through the real dlopen path), a bad device name.
func TestNoGPU(t *testing.T) {
	_, err := openDevice("cuda0", filepath.Join(t.TempDir(), "libggml-cuda.so"))
	if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), "scripts/deps.sh cuda") {
		t.Errorf("no CUDA backend: %v", err)
	}
	// A library whose only defect is a missing dependency, as libggml-cuda.so on a host without CUDA 13.
	gcc := testenv.Need(t, "gcc")
	dir := t.TempDir()
	stub := filepath.Join(dir, "stub")
	if err := os.Mkdir(stub, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "x.c")
	if err := os.WriteFile(src, []byte("int native_cuda_stub(void) { return 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	run("-shared", "-fPIC", "-o", filepath.Join(stub, "libcudart.so.13"), "-Wl,-soname,libcudart.so.13", src)
	lib := filepath.Join(dir, "libggml-cuda.so")
	run("-shared", "-fPIC", "-o", lib, src, "-Wl,--no-as-needed", "-L"+stub, "-l:libcudart.so.13")
	if err := os.RemoveAll(stub); err != nil {
		t.Fatal(err)
	}
	_, err = openDevice("cuda0", lib)
	if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), "libcudart.so.13: cannot open shared object file") || strings.Contains(err.Error(), "\n") {
		t.Errorf("missing CUDA runtime: %v", err)
	}
	for _, bad := range []string{"gpu0", "cuda", "cuda-1", "cuda0x"} {
		if _, err := openDevice(bad, lib); !errors.Is(err, llm.ErrBadSpec) {
			t.Errorf("device=%s: %v", bad, err)
		}
	}
	if d, err := openDevice("cpu", lib); d != nil || err != nil {
		t.Errorf("device=cpu: %v %v", d, err)
	}
	// Through the spec: the model is never loaded on the CPU instead.
	_, err = (llm.Registry{"llamacpp": Open}).Open("llamacpp:model=" + tiny.Model + ",device=cuda0")
	if err == nil || (!errors.Is(err, ErrNoGPU) && !strings.Contains(err.Error(), "device=cuda0")) {
		t.Errorf("spec device=cuda0: %v", err)
	}
	if _, err := (llm.Registry{"llamacpp": Open}).Open("llamacpp:model=" + tiny.Model + ",gpu_layers=8"); !errors.Is(err, llm.ErrBadSpec) {
		t.Errorf("gpu_layers without device: %v", err)
	}
	if LiveHandles() != 0 {
		t.Errorf("LiveHandles = %d", LiveHandles())
	}
}
