package llamacpp

/*
#include <stdlib.h>
#include "ggml.h"
#include "loader.h"
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/framesweep/framesweep/internal/version"
	"github.com/framesweep/framesweep/llm"
)

// Release is the llama.cpp release this package is built for (the prebuilt libraries and the mtmd
// source of node-llama-cpp version.NodeLlamaCpp).
const Release = version.LlamaCpp

// LinkedGGML is the version and commit of the libggml-base this process runs, read from the library
// (ggml_version, ggml_commit) rather than from a constant of ours.
func LinkedGGML() (ver, commit string) {
	return C.GoString(C.ggml_version()), C.GoString(C.ggml_commit())
}

var (
	backendOnce sync.Once
	backendErr  error
)

// logLevels maps FRAMESWEEP_LLAMA_LOG to ggml_log_level: llama.cpp's own messages reach stderr from
// that level on (default: errors only; its warnings and advice about its own flags stay off).
var logLevels = map[string]C.int{"debug": 1, "info": 2, "warn": 3, "error": 4, "": 4}

// abortExit is the exit status of a process that llama.cpp aborts in (one line on stderr first,
// native_abort_one_line); the load probe's child sets its own before backendInit.
var abortExit = 1

// backendInit loads the best checked ggml CPU backend beside libllama and initialises llama.cpp, once.
// A damaged library is skipped with a line on stderr (Skipped lists it), never dlopened.
func backendInit() error {
	backendOnce.Do(func() {
		C.native_abort_one_line(C.int(abortExit))
		lvl, ok := logLevels[os.Getenv("FRAMESWEEP_LLAMA_LOG")]
		if !ok {
			lvl = 4
		}
		dir := LibDir()
		if dir == "" {
			backendErr = errors.New("llama.cpp: cannot locate the loaded libllama")
			return
		}
		best, skipped, err := chooseCPU(dir)
		skippedLibs = skipped
		for _, s := range skipped {
			fmt.Fprintf(os.Stderr, "framesweep: llama.cpp: skipped %s: %s\n", filepath.Join(dir, s.File), s.Why)
		}
		if err != nil {
			backendErr = fmt.Errorf("llama.cpp: %w", err)
			return
		}
		cb := C.CString(best)
		defer C.free(unsafe.Pointer(cb))
		var buf [512]C.char
		if C.native_backend_init(lvl, cb, &buf[0], C.size_t(len(buf))) != 0 {
			backendErr = fmt.Errorf("llama.cpp: %s", C.GoString(&buf[0]))
		}
	})
	return backendErr
}

// SkippedLibrary is a library that was not loaded because it failed the checks before dlopen.
type SkippedLibrary struct {
	File string `json:"file"` // its name in LibDir
	Why  string `json:"why"`
}

var skippedLibs []SkippedLibrary

// Skipped lists the CPU backend libraries beside libllama that the first backend load skipped
// (damaged, replaced, not for this machine); version reports them.
func Skipped() []SkippedLibrary {
	_ = backendInit()
	return append([]SkippedLibrary(nil), skippedLibs...)
}

// chooseCPU picks the CPU backend library of dir to register: among the libggml-cpu-*.so that pass
// checkLibrary, the one whose ggml_backend_score is highest for this CPU (ggml's own rule; a tie
// goes to the first by name). The others are dlopened only to be scored, and only once checked.
func chooseCPU(dir string) (best string, skipped []SkippedLibrary, err error) {
	digests, err := readManifest(dir)
	if err != nil {
		return "", nil, err
	}
	paths, err := filepath.Glob(filepath.Join(dir, "libggml-cpu-*.so"))
	if err != nil {
		return "", nil, err
	}
	bestScore := 0
	for _, p := range paths { // Glob sorts
		name := filepath.Base(p)
		if why := checkLibrary(p, digests, "ggml_backend_init", "ggml_backend_score"); why != "" {
			skipped = append(skipped, SkippedLibrary{File: name, Why: why})
			continue
		}
		cp := C.CString(p)
		var buf [512]C.char
		score := int(C.native_backend_score(cp, &buf[0], C.size_t(len(buf))))
		C.free(unsafe.Pointer(cp))
		if score < 0 {
			skipped = append(skipped, SkippedLibrary{File: name, Why: C.GoString(&buf[0])})
			continue
		}
		if score > bestScore {
			best, bestScore = p, score
		}
	}
	if best == "" {
		msg := "no ggml CPU backend (libggml-cpu-*.so) in " + dir + " loads on this CPU"
		if len(skipped) > 0 {
			msg += fmt.Sprintf(" (%d skipped: the first, %s: %s)", len(skipped), skipped[0].File, skipped[0].Why)
		}
		return "", skipped, errors.New(msg)
	}
	return best, skipped, nil
}

// LibDir is the directory the running libllama was loaded from ("" when unknown).
func LibDir() string {
	var buf [4096]C.char
	if C.native_lib_dir(&buf[0], C.size_t(len(buf))) != 0 {
		return ""
	}
	return filepath.Clean(C.GoString(&buf[0])) // the run path's "bin/../third_party/…" as loaded
}

// Backend is one loaded ggml device: its name (CPU, CUDA0, …) and detail (the CPU backend's library
// variant, e.g. libggml-cpu-zen4.so; a GPU's description).
type Backend struct {
	Name   string `json:"name"`
	Detail string `json:"detail"`
}

func (b Backend) String() string { return b.Name + " (" + b.Detail + ")" }

// Backends loads the CPU backend if it is not yet (as the first model load does) and lists the
// loaded devices.
func Backends() ([]Backend, error) {
	if err := backendInit(); err != nil {
		return nil, err
	}
	buf := make([]byte, 1024)
	for range 2 {
		n := int(C.native_backends((*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf))))
		if n < 0 {
			return nil, errors.New("llama.cpp: listing the backends failed")
		}
		if n < len(buf) {
			var out []Backend
			for _, line := range strings.Split(strings.TrimSpace(string(buf[:n])), "\n") {
				name, detail, _ := strings.Cut(line, "\t")
				out = append(out, Backend{Name: name, Detail: detail})
			}
			return out, nil
		}
		buf = make([]byte, n+1)
	}
	return nil, errors.New("llama.cpp: the backend list changed while read")
}

// device is a GPU the model and projector run on (nil: the CPU).
type device struct {
	p     unsafe.Pointer
	name  string // e.g. "CUDA0 (NVIDIA H200)"
	build string // the CUDA build loaded and where its runtime came from (CUDABuild.recordText)
}

func (d *device) handle() unsafe.Pointer {
	if d == nil {
		return nil
	}
	return d.p
}

// ErrNoGPU: a GPU was asked for and cannot be had (the library, a CUDA library it needs, or the
// device is missing); the *llm.Error names what is missing and how to install it.
var ErrNoGPU = llm.ErrDevice

// openDevice resolves a device= value: "" or "cpu" is the CPU (nil); "cudaN" loads the CUDA build
// this host can run (ResolveCUDA, once) and returns its N-th device. Never a silent fall-back to the
// CPU.
func openDevice(spec string) (*device, error) {
	if spec == "" || spec == "cpu" {
		return nil, nil
	}
	var idx int
	if _, err := fmt.Sscanf(spec, "cuda%d", &idx); err != nil || fmt.Sprintf("cuda%d", idx) != spec || idx < 0 {
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "llamacpp: device=%q (want cpu or cudaN, e.g. cuda0)", spec)
	}
	if err := backendInit(); err != nil {
		return nil, err
	}
	build, err := chooseCUDA(spec)
	if err != nil {
		return nil, err
	}
	lib := build.Lib
	cl := C.CString(lib)
	defer C.free(unsafe.Pointer(cl))
	var buf [1024]C.char
	n := int(C.native_gpu_load(cl, &buf[0], C.size_t(len(buf))))
	if n < 0 {
		return nil, llm.Errorf("load device", lib, ErrNoGPU, "device=%s: %s (the CUDA %d build needs the CUDA %d runtime and cuBLAS and the NVIDIA driver's libcuda.so.1; `framesweep doctor` lists what this host has; docs/runtimes.md \"GPU\")", spec, C.GoString(&buf[0]), build.Major, build.Major)
	}
	if idx >= n {
		return nil, llm.Errorf("load device", lib, ErrNoGPU, "device=%s: the CUDA backend found %d CUDA device(s)", spec, n)
	}
	d := C.native_gpu_device(C.int(idx), &buf[0], C.size_t(len(buf)))
	if d == nil {
		return nil, llm.Errorf("load device", lib, ErrNoGPU, "device=%s: no such device", spec)
	}
	return &device{p: d, name: C.GoString(&buf[0]), build: build.recordText()}, nil
}

var (
	cudaMu     sync.Mutex
	cudaChosen *CUDABuild
)

// chooseCUDA picks the CUDA build once per process (the first GPU load fixes it: one CUDA backend per
// process), asks the driver its version when it resolves, and preloads the build's NVIDIA libraries.
func chooseCUDA(spec string) (*CUDABuild, error) {
	cudaMu.Lock()
	defer cudaMu.Unlock()
	if cudaChosen != nil {
		return cudaChosen, nil
	}
	c := ResolveCUDA(0)
	if c.Driver != "" {
		if v, err := DriverVersion(c.Driver); err == nil {
			c = ResolveCUDA(v)
		}
	}
	b := c.Chosen()
	if b == nil {
		installed := false
		for _, x := range c.Builds {
			installed = installed || x.Installed
		}
		if !installed {
			return nil, llm.Errorf("load device", c.Dir, ErrNoGPU, "device=%s: llama.cpp's CUDA backend is not installed (run `scripts/deps.sh cuda` or `make deps-cuda`)", spec)
		}
		return nil, llm.Errorf("load device", c.Dir, ErrNoGPU, "device=%s: no CUDA build of llama.cpp can load on this host (%s); install the CUDA 13 or 12 runtime and cuBLAS (LD_LIBRARY_PATH or the system), or set %s to a Python environment with NVIDIA's wheels; `framesweep doctor` lists what is missing (docs/runtimes.md \"GPU\")",
			spec, strings.TrimPrefix(c.String(), "none: "), EnvCUDAPython)
	}
	if err := preloadCUDA(b); err != nil {
		return nil, llm.Errorf("load device", b.Lib, ErrNoGPU, "device=%s: loading the CUDA %d runtime: %v", spec, b.Major, err)
	}
	cudaChosen = b
	return b, nil
}

// describeBackend names the build and the devices a runtime runs on, for its records:
// "llama.cpp v0.4.0 (ggml 0.23.0 5b4ebc5); CPU libggml-cpu-zen4.so" or, on a GPU,
// "…; CUDA0 (NVIDIA H200), all layers, CUDA 12 build, libcudart.so.12 and libcublas.so.12 from the
// system; CPU libggml-cpu-zen4.so" (no path of this host: records may be exported).
func describeBackend(gpu *device, layers int) string {
	v, c := LinkedGGML()
	s := fmt.Sprintf("llama.cpp %s (ggml %s %s)", Release, v, c)
	if gpu != nil {
		n := "all layers"
		if layers >= 0 {
			n = fmt.Sprintf("%d layers", layers)
		}
		s += "; " + gpu.name + ", " + n + ", " + gpu.build
	}
	if bs, err := Backends(); err == nil {
		for _, b := range bs {
			if b.Name == "CPU" {
				s += "; CPU " + b.Detail
			}
		}
	}
	return s
}
