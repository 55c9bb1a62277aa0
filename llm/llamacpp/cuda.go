package llamacpp

/*
#include <stdlib.h>
#include "loader.h"
*/
import "C"

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"
)

// scripts/deps.sh cuda installs llama.cpp's CUDA backend twice, from the same release: built for
// CUDA 13 (primary) into <CUDADir>/13 and for CUDA 12 (fallback) into <CUDADir>/12. Each links the
// CUDA runtime and cuBLAS of its major (libcudart.so.N, libcublas.so.N) and the driver's libcuda.so.1,
// none of which ships with framesweep. The build chosen is the first whose libraries all resolve on
// this host, looked up as the loader would (LD_LIBRARY_PATH, the system) and in the nvidia/*/lib
// folders of the Python environment EnvCUDAPython names, and whose major the driver supports.

// Environment variables of the CUDA choice (docs/runtimes.md "GPU").
const (
	// EnvCUDADir is the directory holding the CUDA builds (default: LibDir/../cuda).
	EnvCUDADir = "FRAMESWEEP_LLAMA_CUDA"
	// EnvCUDAPython names a Python environment (a venv or conda prefix, or a site-packages folder)
	// whose NVIDIA wheels (nvidia/*/lib: nvidia-cuda-runtime-cu12, nvidia-cublas-cu12, …) provide
	// the CUDA runtime and cuBLAS.
	EnvCUDAPython = "FRAMESWEEP_CUDA_PYTHON"
)

// CUDAMajors are the CUDA builds in order of preference.
var CUDAMajors = []int{13, 12}

// CUDABuild is one CUDA build of llama.cpp's backend and what it needs of this host.
type CUDABuild struct {
	Major     int               `json:"cuda"`
	Lib       string            `json:"lib"`
	Installed bool              `json:"installed"`
	Damaged   string            `json:"damaged,omitempty"` // why the library must not be loaded
	Found     map[string]string `json:"found,omitempty"`   // each library it needs → where it resolves
	From      map[string]string `json:"from,omitempty"`    // each found → which place: the system, LD_LIBRARY_PATH, …
	Missing   []string          `json:"missing,omitempty"` // the libraries it needs that resolve nowhere
	// DriverTooOld is set when the driver's CUDA version is below this build's major.
	DriverTooOld bool `json:"driver_too_old,omitempty"`
}

// usable reports whether this build would load.
func (b CUDABuild) usable() bool {
	return b.Installed && b.Damaged == "" && len(b.Missing) == 0 && !b.DriverTooOld
}

// CUDAChoice is the CUDA build that would load on this host, or why none would.
type CUDAChoice struct {
	Dir    string      `json:"dir"`
	Python []string    `json:"python_lib_dirs,omitempty"` // EnvCUDAPython's nvidia/*/lib folders
	Driver string      `json:"driver,omitempty"`          // where libcuda.so.1 resolves
	Builds []CUDABuild `json:"builds"`
	// DriverVersion is cuDriverGetVersion's 1000 × major + 10 × minor (0: not asked).
	DriverVersion int `json:"driver_version,omitempty"`
}

// Chosen is the build that would load (nil: none).
func (c CUDAChoice) Chosen() *CUDABuild {
	for i := range c.Builds {
		if c.Builds[i].usable() {
			return &c.Builds[i]
		}
	}
	return nil
}

// String names the chosen build and its runtime, or says what each build lacks:
// "CUDA 12 build …/cuda/12/libggml-cuda.so (libcudart.so.12 at …, libcublas.so.12 at …)".
func (c CUDAChoice) String() string {
	if b := c.Chosen(); b != nil {
		return fmt.Sprintf("CUDA %d build %s (%s)", b.Major, b.Lib, b.runtime())
	}
	var why []string
	for _, b := range c.Builds {
		why = append(why, fmt.Sprintf("CUDA %d build: %s", b.Major, b.lack(c.DriverVersion)))
	}
	return "none: " + strings.Join(why, "; ")
}

// runtime lists where the build's CUDA runtime and cuBLAS resolve.
func (b CUDABuild) runtime() string {
	var out []string
	for _, prefix := range []string{"libcudart.", "libcublas."} {
		for _, n := range sortedKeys(b.Found) {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n+" at "+b.Found[n])
			}
		}
	}
	if len(out) == 0 {
		return "no CUDA runtime needed"
	}
	return strings.Join(out, ", ")
}

// recordText names the build and where its runtime came from without this host's paths (records
// may be exported): "CUDA 12 build, libcudart.so.12 and libcublas.so.12 from the Python environment
// (FRAMESWEEP_CUDA_PYTHON)".
func (b CUDABuild) recordText() string {
	var names, from []string
	for _, prefix := range []string{"libcudart.", "libcublas."} {
		for _, n := range sortedKeys(b.Found) {
			if strings.HasPrefix(n, prefix) {
				names = append(names, n)
				if !slices.Contains(from, b.From[n]) {
					from = append(from, b.From[n])
				}
			}
		}
	}
	if len(names) == 0 {
		return fmt.Sprintf("CUDA %d build", b.Major)
	}
	return fmt.Sprintf("CUDA %d build, %s from %s", b.Major, strings.Join(names, " and "), strings.Join(from, " and "))
}

// lack says why a build would not load.
func (b CUDABuild) lack(driver int) string {
	switch {
	case !b.Installed:
		return "not installed (`make deps-cuda`)"
	case b.Damaged != "":
		return b.Lib + ": " + b.Damaged
	case len(b.Missing) > 0:
		return strings.Join(b.Missing, ", ") + " not found"
	case b.DriverTooOld:
		return fmt.Sprintf("the driver supports CUDA %d.%d, this build needs %d.0 or newer", driver/1000, driver%1000/10, b.Major)
	}
	return "usable"
}

// CUDADir is where the CUDA builds are: EnvCUDADir, else beside LibDir.
func CUDADir() string {
	if d := os.Getenv(EnvCUDADir); d != "" {
		return filepath.Clean(d)
	}
	return filepath.Clean(filepath.Join(LibDir(), "..", "cuda"))
}

// pythonLibDirs are the folders of a Python environment that hold NVIDIA's CUDA libraries: the
// wheels' nvidia/*/lib (under site-packages, or the folder itself), and lib/ of a conda prefix.
func pythonLibDirs(env string) []string {
	if env == "" {
		return nil
	}
	var out []string
	for _, pat := range []string{"nvidia/*/lib", "lib/python3*/site-packages/nvidia/*/lib", "lib64/python3*/site-packages/nvidia/*/lib", "lib"} {
		m, _ := filepath.Glob(filepath.Join(env, pat))
		for _, d := range m {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				out = append(out, d)
			}
		}
	}
	return out
}

// ResolveCUDA finds, without loading anything, which CUDA build would load. driverVersion (0:
// unknown) rules out builds newer than the driver.
func ResolveCUDA(driverVersion int) CUDAChoice {
	c := CUDAChoice{Dir: CUDADir(), Python: pythonLibDirs(os.Getenv(EnvCUDAPython)), DriverVersion: driverVersion}
	s := newLibSearch(c.Python)
	c.Driver = s.find("libcuda.so.1", nil)
	for _, major := range CUDAMajors {
		b := CUDABuild{Major: major, Lib: filepath.Join(c.Dir, fmt.Sprint(major), "libggml-cuda.so")}
		if st, err := os.Stat(b.Lib); err == nil && st.Mode().IsRegular() {
			b.Installed = true
			digests, err := readManifest(filepath.Dir(b.Lib))
			if err != nil {
				b.Damaged = err.Error()
			} else {
				b.Damaged = checkLibrary(b.Lib, digests, "ggml_backend_init")
			}
			if b.Damaged == "" {
				b.Found, b.From, b.Missing = resolveNeeded(s, b.Lib)
			}
			b.DriverTooOld = driverVersion > 0 && driverVersion < 1000*major
		}
		c.Builds = append(c.Builds, b)
	}
	return c
}

// resolveNeeded resolves lib's DT_NEEDED libraries and, for the NVIDIA ones found, theirs (cuBLAS
// needs cuBLASLt): soname → path, and the sonames found nowhere. Our own libraries (libggml-base, …)
// are looked for beside libllama.
func resolveNeeded(s *libSearch, lib string) (found, from map[string]string, missing []string) {
	found, from = map[string]string{}, map[string]string{}
	type item struct{ name, from string }
	queue := []item{{filepath.Base(lib), lib}}
	seen := map[string]bool{}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		needed, rpath := elfNeeds(it.from)
		for _, n := range needed {
			if seen[n] {
				continue
			}
			seen[n] = true
			p, where := s.where(n, append(rpath, LibDir()))
			if p == "" {
				missing = append(missing, n)
				continue
			}
			found[n], from[n] = p, where
			if cudaFamily(n) {
				queue = append(queue, item{n, p})
			}
		}
	}
	return found, from, missing
}

// cudaFamily: NVIDIA's libraries (runtime, cuBLAS, driver, …), whose own needs are followed.
func cudaFamily(soname string) bool {
	return strings.HasPrefix(soname, "libcu") || strings.HasPrefix(soname, "libnv")
}

// elfNeeds is an ELF file's DT_NEEDED list and its run path with $ORIGIN expanded (empty when the
// file cannot be read; the loader would fail on it too, and the dlopen error says so).
func elfNeeds(path string) (needed, rpath []string) {
	ef, err := elf.Open(path)
	if err != nil {
		return nil, nil
	}
	defer ef.Close()
	needed, _ = ef.ImportedLibraries()
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		vals, _ := ef.DynString(tag)
		for _, v := range vals {
			for _, d := range filepath.SplitList(v) {
				d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", "$ORIGIN"), "$ORIGIN", filepath.Dir(path))
				rpath = append(rpath, d)
			}
		}
	}
	return needed, rpath
}

// DriverVersion asks the driver library at path for its CUDA version (cuDriverGetVersion: no GPU, no
// initialisation needed).
func DriverVersion(path string) (int, error) {
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var v C.int32_t
	var buf [512]C.char
	if C.native_cuda_driver(cp, &v, &buf[0], C.size_t(len(buf))) != 0 {
		return 0, fmt.Errorf("%s: %s", path, C.GoString(&buf[0]))
	}
	return int(v), nil
}

// GPU is one CUDA device as the driver lists it.
type GPU struct {
	Name  string `json:"name"`
	Bytes uint64 `json:"bytes"`
}

// Devices initialises the driver at path (cuInit) and lists its devices.
func Devices(path string) ([]GPU, error) {
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	buf := make([]C.char, 8192)
	n := int(C.native_cuda_devices(cp, &buf[0], C.size_t(len(buf))))
	out := C.GoString(&buf[0])
	if n < 0 {
		return nil, fmt.Errorf("%s: %s", path, out)
	}
	var gpus []GPU
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, bytes, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		var b uint64
		fmt.Sscan(bytes, &b)
		gpus = append(gpus, GPU{Name: name, Bytes: b})
	}
	return gpus, nil
}

// preloadCUDA loads the chosen build's NVIDIA libraries by path, each after the ones it needs, so
// that the build's own dlopen finds them loaded (the Python environment's folders are unknown to the
// loader) and they are the ones the choice reported.
func preloadCUDA(b *CUDABuild) error {
	done := map[string]bool{}
	var visit func(name string) error
	visit = func(name string) error {
		if done[name] {
			return nil
		}
		done[name] = true
		p := b.Found[name]
		needed, _ := elfNeeds(p)
		for _, n := range needed {
			if _, ok := b.Found[n]; ok && cudaFamily(n) {
				if err := visit(n); err != nil {
					return err
				}
			}
		}
		cp := C.CString(p)
		defer C.free(unsafe.Pointer(cp))
		var buf [1024]C.char
		if C.native_preload(cp, &buf[0], C.size_t(len(buf))) != 0 {
			return fmt.Errorf("%s", C.GoString(&buf[0]))
		}
		return nil
	}
	for _, n := range sortedKeys(b.Found) {
		if cudaFamily(n) {
			if err := visit(n); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// CUDARuntime is where the CUDA runtime and cuBLAS of one major resolve on this host, whether or not
// a build of llama.cpp for it is installed (`framesweep doctor`).
type CUDARuntime struct {
	Major   int               `json:"cuda"`
	Found   map[string]string `json:"found,omitempty"`
	Missing []string          `json:"missing,omitempty"`
}

// FindCUDARuntime resolves libcudart.so.N and libcublas.so.N (and the NVIDIA libraries they need) as
// the CUDA build's load would: LD_LIBRARY_PATH, EnvCUDAPython's folders, the system.
func FindCUDARuntime(major int) CUDARuntime {
	s := newLibSearch(pythonLibDirs(os.Getenv(EnvCUDAPython)))
	r := CUDARuntime{Major: major, Found: map[string]string{}}
	for _, n := range []string{fmt.Sprintf("libcudart.so.%d", major), fmt.Sprintf("libcublas.so.%d", major)} {
		p := s.find(n, nil)
		if p == "" {
			r.Missing = append(r.Missing, n)
			continue
		}
		r.Found[n] = p
		found, _, missing := resolveNeeded(s, p)
		for k, v := range found {
			if cudaFamily(k) {
				r.Found[k] = v
			}
		}
		for _, m := range missing {
			if !slices.Contains(r.Missing, m) {
				r.Missing = append(r.Missing, m)
			}
		}
	}
	return r
}
