// Package version pins the engine version and the upstream C library versions it is built against.
// The Makefile reads these constants; cache keys include Engine so a new engine never reuses old objects.
package version

const (
	// Engine is framesweep's own version; it enters every content-addressed cache key.
	Engine = "0.1.0"
	// FFmpeg is the FFmpeg release go-astiav v0.16.0 is built for (Debian 12 ships it).
	FFmpeg = "5.1"
	// GoAstiav is the pinned go-astiav module version.
	GoAstiav = "v0.16.0"
	// OpenCV is the OpenCV release gocv v0.32.0 is built for (Debian 12 ships it).
	OpenCV = "4.6.0"
	// Gocv is the pinned gocv module version.
	Gocv = "v0.32.0"
	// LlamaCpp is the llama.cpp commit vendored by github.com/ollama/ollama v0.17.4.
	LlamaCpp = "ec98e2002"
	// Ollama is the pinned ollama module version (llama.cpp + mtmd through cgo).
	Ollama = "v0.17.4"
	// ONNXRuntime is the libonnxruntime release taken from npm onnxruntime-node.
	ONNXRuntime = "1.30.0"
)
