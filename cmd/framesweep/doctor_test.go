package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/llm/llamacpp"
)

// cudaStandIns builds bench/gpu/standins.sh's stand-in CUDA libraries.
func cudaStandIns(t *testing.T) string {
	t.Helper()
	testenv.Need(t, "gcc")
	dir := filepath.Join(t.TempDir(), "standins")
	if out, err := exec.Command("bash", "../../bench/gpu/standins.sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("standins.sh: %v: %s", err, out)
	}
	return dir
}

// cudaHost sets the environment of a stand-in host: "12" (the CUDA 12 runtime as NVIDIA's pip wheels
// in a Python environment, a CUDA 12.4 driver) or "13" (the CUDA 13 runtime on LD_LIBRARY_PATH, a
// CUDA 13.0 driver); both builds installed.
func cudaHost(t *testing.T, si, major string) {
	t.Setenv(llamacpp.EnvCUDADir, filepath.Join(si, "cuda"))
	ld := filepath.Join(si, "driver"+major)
	python := ""
	if major == "13" {
		ld = filepath.Join(si, "host13", "lib") + ":" + ld
	} else {
		python = filepath.Join(si, "host12", "venv")
	}
	t.Setenv(llamacpp.EnvCUDAPython, python)
	t.Setenv("LD_LIBRARY_PATH", ld)
}

type doctorOut struct {
	Lines   []doctorLine `json:"lines"`
	Missing []string     `json:"missing"`
}

func runDoctorJSON(t *testing.T, args ...string) (int, doctorOut, string, time.Duration) {
	t.Helper()
	var out, errb bytes.Buffer
	start := time.Now()
	code := dispatch(append([]string{"doctor", "--json"}, args...), &out, &errb)
	took := time.Since(start)
	var d doctorOut
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, out.String(), errb.String())
	}
	return code, d, errb.String(), took
}

// TestDoctorWithoutGPU: on a host without the driver (this one) the preflight names every missing
// piece, each with the package or variable that provides it, in one line each, and exits 1 within
// 10 s.
func TestDoctorWithoutGPU(t *testing.T) {
	if llamacpp.ResolveCUDA(0).Driver != "" {
		t.Skip("this host has the NVIDIA driver's libcuda.so.1")
	}
	t.Setenv(llamacpp.EnvCUDAPython, "")
	code, d, stderr, took := runDoctorJSON(t)
	if code != exitError || took > 10*time.Second {
		t.Fatalf("exit %d after %s, want 1 within 10 s", code, took)
	}
	if strings.Join(d.Missing, ",") != "driver,cuda,llama,nvdec,devices" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
		!strings.Contains(stderr, "driver, cuda, llama, nvdec, devices") {
		t.Errorf("missing %v, stderr %q", d.Missing, stderr)
	}
	hints := map[string]string{"driver": "nvidia-driver", "cuda": llamacpp.EnvCUDAPython, "llama": "make deps-cuda", "nvdec": "libcuda.so.1", "devices": "libcuda.so.1"}
	clips := 0
	for _, l := range d.Lines {
		if l.Piece == "nvdec" {
			clips++
		}
		if l.Status == "cpu" {
			continue
		}
		if l.Status != "missing" || !strings.Contains(l.Detail, hints[l.Piece]) {
			t.Errorf("%+v: want missing, naming %q", l, hints[l.Piece])
		}
	}
	if clips != len(nvdecOrder) {
		t.Errorf("%d NVDEC lines, want one per codec and bit depth (%d)", clips, len(nvdecOrder))
	}
	var text bytes.Buffer
	if dispatch([]string{"doctor", "--check", "driver"}, &text, &bytes.Buffer{}) != exitError || strings.Count(text.String(), "\n") != 1 ||
		!strings.HasPrefix(text.String(), "driver ") {
		t.Errorf("doctor --check driver: %q", text.String())
	}
	if code := dispatch([]string{"doctor", "--check", "gpu"}, &bytes.Buffer{}, &bytes.Buffer{}); code != exitUsage {
		t.Errorf("--check gpu: exit %d, want 2", code)
	}
}

// TestCUDAStandInHosts: with stand-in libraries for a CUDA-12-only host (NVIDIA's pip wheels in a
// Python environment) and a CUDA-13-only host (LD_LIBRARY_PATH), `doctor` finds the driver, the
// runtime of that major and the llama.cpp build of that major (the other major's runtime "absent",
// not a failure) and misses the devices (the stand-in driver has none), exactly what was asked for
// decides its exit status, and `version` names the build and its runtime.
func TestCUDAStandInHosts(t *testing.T) {
	si := cudaStandIns(t)
	for _, major := range []string{"12", "13"} {
		t.Run("cuda"+major, func(t *testing.T) {
			cudaHost(t, si, major)
			code, d, _, _ := runDoctorJSON(t, "--check", "driver,cuda,llama,devices")
			if code != exitError || strings.Join(d.Missing, ",") != "devices" {
				t.Errorf("exit %d, missing %v, want 1 and only the devices: %+v", code, d.Missing, d.Lines)
			}
			want := map[string]string{"libcuda.so.1": "CUDA " + major + ".", "runtime " + major: "libcudart.so." + major + " at " + si,
				"cuda build": "CUDA " + major + " build " + filepath.Join(si, "cuda", major, "libggml-cuda.so"), "cuInit": "CUDA_ERROR_NO_DEVICE"}
			for _, l := range d.Lines {
				if w, ok := want[l.Name]; ok && !strings.Contains(l.Detail, w) {
					t.Errorf("%+v lacks %q", l, w)
				}
				if strings.HasPrefix(l.Name, "runtime") && l.Name != "runtime "+major && l.Status != "absent" {
					t.Errorf("%+v: the other major's runtime should be absent", l)
				}
			}
			if code, _, _, _ := runDoctorJSON(t, "--check", "driver,cuda,llama"); code != exitOK {
				t.Errorf("--check driver,cuda,llama: exit %d, want 0", code)
			}
			var out bytes.Buffer
			if code := dispatch([]string{"version", "--json"}, &out, &bytes.Buffer{}); code != exitOK {
				t.Fatalf("version: exit %d", code)
			}
			var rep versionReport
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			got := rep.Libraries["llama_cpp_cuda"]
			if !strings.HasPrefix(got, "CUDA "+major+" build "+filepath.Join(si, "cuda", major)) || !strings.Contains(got, "libcudart.so."+major+" at "+si) {
				t.Errorf("version: llama_cpp_cuda = %q", got)
			}
		})
	}
}

// TestVersionSkipsDamagedBackend: the binary installed with its libraries beside it, one CPU backend
// it would never use truncated (libggml-cpu-ivybridge.so; before, SIGBUS in dlopen in every command),
// runs `version` from the install's libraries, exit 0, naming what it skipped.
func TestVersionSkipsDamagedBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	root := t.TempDir()
	lib := filepath.Join(root, "third_party", "llama", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin", "framesweep")
	b, err := os.ReadFile(testenv.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	src := llamacpp.LibDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	// A digest list of the release's files as installed, whether or not this install wrote one
	// (scripts/deps.sh does since the check came): the truncated backend is refused by its digest.
	var sums strings.Builder
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".so") {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(b), e.Name())
		}
	}
	if err := os.WriteFile(filepath.Join(lib, llamacpp.Manifest), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == llamacpp.Manifest {
			continue
		}
		if e.Name() == "libggml-cpu-ivybridge.so" {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(lib, e.Name()), b[:len(b)/3], 0o644); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(lib, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "version", "--json")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LD_LIBRARY_PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("version: %v\n%s", err, errb.String())
	}
	var rep versionReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if s := rep.Libraries["llama_cpp_skipped"]; !strings.HasPrefix(s, "libggml-cpu-ivybridge.so: sha256 ") || !strings.HasSuffix(s, "(damaged or replaced)") {
		t.Errorf("llama_cpp_skipped = %q", s)
	}
	if !strings.HasPrefix(rep.Libraries["llama_cpp_backends"], "CPU (libggml-cpu-") || !strings.Contains(errb.String(), filepath.Join(lib, "libggml-cpu-ivybridge.so")) {
		t.Errorf("backends %q, stderr %q", rep.Libraries["llama_cpp_backends"], errb.String())
	}
}
