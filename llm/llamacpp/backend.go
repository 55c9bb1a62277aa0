package llamacpp

/*
#include <stdlib.h>
#include "ggml.h"
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

// backendInit loads the best ggml CPU backend beside libllama and initialises llama.cpp, once.
func backendInit() error {
	backendOnce.Do(func() {
		lvl, ok := logLevels[os.Getenv("FRAMESWEEP_LLAMA_LOG")]
		if !ok {
			lvl = 4
		}
		var buf [512]C.char
		if C.native_backend_init(lvl, &buf[0], C.size_t(len(buf))) != 0 {
			backendErr = fmt.Errorf("llama.cpp: %s", C.GoString(&buf[0]))
		}
	})
	return backendErr
}

// LibDir is the directory the running libllama was loaded from ("" when unknown).
func LibDir() string {
	var buf [4096]C.char
	if C.native_lib_dir(&buf[0], C.size_t(len(buf))) != 0 {
		return ""
	}
	return C.GoString(&buf[0])
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
	p    unsafe.Pointer
	name string // e.g. "CUDA0 (NVIDIA H200)"
}

func (d *device) handle() unsafe.Pointer {
	if d == nil {
		return nil
	}
	return d.p
}

// CUDALib is where scripts/deps.sh cuda puts llama.cpp's CUDA backend, relative to LibDir.
const CUDALib = "../cuda/libggml-cuda.so"

// ErrNoGPU: a GPU was asked for and cannot be had (the library, a CUDA library it needs, or the
// device is missing); the *llm.Error names what is missing and how to install it.
var ErrNoGPU = llm.ErrDevice

// cudaLib is the CUDA backend library openDevice loads (a variable for the tests).
func cudaLib() string { return filepath.Clean(filepath.Join(LibDir(), CUDALib)) }

// openDevice resolves a device= value: "" or "cpu" is the CPU (nil); "cudaN" loads the CUDA backend
// library lib (once) and returns its N-th device. Never a silent fall-back to the CPU.
func openDevice(spec, lib string) (*device, error) {
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
	if _, err := os.Stat(lib); err != nil {
		return nil, llm.Errorf("load device", lib, ErrNoGPU, "device=%s: llama.cpp's CUDA backend is not installed (run `scripts/deps.sh cuda` or `make deps-cuda`)", spec)
	}
	cl := C.CString(lib)
	defer C.free(unsafe.Pointer(cl))
	var buf [1024]C.char
	n := int(C.native_gpu_load(cl, &buf[0], C.size_t(len(buf))))
	if n < 0 {
		return nil, llm.Errorf("load device", lib, ErrNoGPU, "device=%s: %s (llama.cpp's CUDA backend needs the CUDA 13 runtime and cuBLAS, libcudart.so.13 and libcublas.so.13, and the NVIDIA driver's libcuda.so.1; see docs/runtimes.md \"GPU\")", spec, C.GoString(&buf[0]))
	}
	if idx >= n {
		return nil, llm.Errorf("load device", lib, ErrNoGPU, "device=%s: the CUDA backend found %d CUDA device(s)", spec, n)
	}
	d := C.native_gpu_device(C.int(idx), &buf[0], C.size_t(len(buf)))
	if d == nil {
		return nil, llm.Errorf("load device", lib, ErrNoGPU, "device=%s: no such device", spec)
	}
	return &device{p: d, name: C.GoString(&buf[0])}, nil
}

// describeBackend names the build and the devices a runtime runs on, for its records:
// "llama.cpp v0.4.0 (ggml 0.23.0 5b4ebc5); CPU libggml-cpu-zen4.so" or, on a GPU,
// "…; CUDA0 (NVIDIA H200), all layers; CPU libggml-cpu-zen4.so".
func describeBackend(gpu *device, layers int) string {
	v, c := LinkedGGML()
	s := fmt.Sprintf("llama.cpp %s (ggml %s %s)", Release, v, c)
	if gpu != nil {
		n := "all layers"
		if layers >= 0 {
			n = fmt.Sprintf("%d layers", layers)
		}
		s += "; " + gpu.name + ", " + n
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
