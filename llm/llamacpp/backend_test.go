package llamacpp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
// it, never the CPU: no CUDA build installed; builds whose CUDA runtime this host lacks (stand-ins that
// need libcudart.so.13/.12); a bad device name. With the CUDA 12 runtime in a Python environment the
// CUDA 12 build goes through the real dlopen path (its runtime preloaded from the environment) as far
// as a stand-in can: ggml refuses to register it, by name.
func TestNoGPU(t *testing.T) {
	si := standIns(t)
	resetCUDA := func() { cudaMu.Lock(); cudaChosen = nil; cudaMu.Unlock() }
	t.Cleanup(resetCUDA)
	t.Setenv(EnvCUDADir, t.TempDir())
	t.Setenv("LD_LIBRARY_PATH", "")
	_, err := openDevice("cuda0")
	if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), "scripts/deps.sh cuda") {
		t.Errorf("no CUDA backend: %v", err)
	}
	t.Setenv(EnvCUDADir, filepath.Join(si, "cuda"))
	_, err = openDevice("cuda0")
	if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), "libcudart.so.13") || !strings.Contains(err.Error(), "libcudart.so.12") ||
		!strings.Contains(err.Error(), EnvCUDAPython) || strings.Contains(err.Error(), "\n") {
		t.Errorf("no CUDA runtime: %v", err)
	}
	t.Setenv(EnvCUDAPython, filepath.Join(si, "host12", "venv"))
	t.Setenv("LD_LIBRARY_PATH", filepath.Join(si, "driver12"))
	_, err = openDevice("cuda0")
	if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), "cuda/12/libggml-cuda.so") ||
		!strings.Contains(err.Error(), "ggml could not register it as a backend") {
		t.Errorf("CUDA 12 host: %v", err)
	}
	for _, bad := range []string{"gpu0", "cuda", "cuda-1", "cuda0x"} {
		if _, err := openDevice(bad); !errors.Is(err, llm.ErrBadSpec) {
			t.Errorf("device=%s: %v", bad, err)
		}
	}
	if d, err := openDevice("cpu"); d != nil || err != nil {
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

var (
	standInsOnce sync.Once
	standInsDir  string
	standInsErr  error
)

// standIns builds bench/gpu/standins.sh's libraries once per test binary.
func standIns(t *testing.T) string {
	t.Helper()
	testenv.Need(t, "gcc")
	standInsOnce.Do(func() {
		standInsDir = filepath.Join(testTmp, "standins")
		out, err := exec.Command("bash", "../../bench/gpu/standins.sh", standInsDir).CombinedOutput()
		if err != nil {
			standInsErr = fmt.Errorf("standins.sh: %v: %s", err, out)
		}
	})
	if standInsErr != nil {
		t.Fatal(standInsErr)
	}
	return standInsDir
}

// TestCUDAChoice: the build chosen for a CUDA-13-only host (the runtime on LD_LIBRARY_PATH), a
// CUDA-12-only host (NVIDIA's pip wheels in the Python environment EnvCUDAPython names), both, both
// under a CUDA 12 driver, neither, and a damaged CUDA 13 build, without loading anything.
func TestCUDAChoice(t *testing.T) {
	si := standIns(t)
	cudaDir := filepath.Join(si, "cuda")
	venv := filepath.Join(si, "host12", "venv")
	lib13, drv13, drv12 := filepath.Join(si, "host13", "lib"), filepath.Join(si, "driver13"), filepath.Join(si, "driver12")
	damaged := filepath.Join(t.TempDir(), "cuda")
	for _, v := range []string{"13", "12"} {
		b, err := os.ReadFile(filepath.Join(cudaDir, v, "libggml-cuda.so"))
		if err != nil {
			t.Fatal(err)
		}
		if v == "13" {
			b = b[:len(b)/2]
		}
		os.MkdirAll(filepath.Join(damaged, v), 0o755)
		if err := os.WriteFile(filepath.Join(damaged, v, "libggml-cuda.so"), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, dir, python, ldpath string
		driver                    int
		want                      int // the chosen major, 0: none
		says                      []string
	}{
		{"13 only", cudaDir, "", lib13 + ":" + drv13, 0, 13, []string{"CUDA 13 build " + filepath.Join(cudaDir, "13", "libggml-cuda.so"), "libcudart.so.13 at " + lib13}},
		{"12 only, pip", cudaDir, venv, drv12, 0, 12, []string{"CUDA 12 build", "libcudart.so.12 at " + venv, "libcublas.so.12 at " + venv}},
		{"both", cudaDir, venv, lib13 + ":" + drv13, 0, 13, []string{"CUDA 13 build"}},
		{"both, CUDA 12.4 driver", cudaDir, venv, lib13 + ":" + drv12, 12040, 12, []string{"CUDA 12 build"}},
		{"neither", cudaDir, "", "", 0, 0, []string{"none: CUDA 13 build: libcudart.so.13, libcublas.so.13", "CUDA 12 build: libcudart.so.12, libcublas.so.12"}},
		{"not installed", t.TempDir(), venv, drv12, 0, 0, []string{"CUDA 13 build: not installed (`make deps-cuda`)"}},
		{"13 damaged", damaged, venv, lib13 + ":" + drv12, 0, 12, []string{"CUDA 12 build"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(EnvCUDADir, c.dir)
			t.Setenv(EnvCUDAPython, c.python)
			t.Setenv("LD_LIBRARY_PATH", c.ldpath)
			ch := ResolveCUDA(c.driver)
			got := 0
			if b := ch.Chosen(); b != nil {
				got = b.Major
			}
			s := ch.String()
			if got != c.want {
				t.Errorf("chose CUDA %d, want %d: %s", got, c.want, s)
			}
			for _, w := range c.says {
				if !strings.Contains(s, w) {
					t.Errorf("%q lacks %q", s, w)
				}
			}
			if c.name == "13 damaged" && !strings.Contains(ch.Builds[0].Damaged, "ELF") && !strings.Contains(ch.Builds[0].Damaged, "truncated") {
				t.Errorf("damaged build: %+v", ch.Builds[0])
			}
		})
	}
}

// TestDescribeGPU: a record made on a GPU names the device, the layers, the CUDA build and where its
// runtime came from, without this host's paths (a device value as openDevice makes it; no GPU here).
func TestDescribeGPU(t *testing.T) {
	b := CUDABuild{Major: 12, Found: map[string]string{"libcudart.so.12": "/v/a", "libcublas.so.12": "/v/b", "libc.so.6": "/lib/c"},
		From: map[string]string{"libcudart.so.12": fromPython, "libcublas.so.12": fromPython, "libc.so.6": fromSystem}}
	d := describeBackend(&device{name: "CUDA0 (NVIDIA H200)", build: b.recordText()}, -1)
	want := "; CUDA0 (NVIDIA H200), all layers, CUDA 12 build, libcudart.so.12 and libcublas.so.12 from the Python environment (FRAMESWEEP_CUDA_PYTHON); CPU libggml-cpu-"
	if !strings.Contains(d, want) || strings.Contains(d, "/v/") {
		t.Errorf("describeBackend = %q, want …%s…, no path", d, want)
	}
}
