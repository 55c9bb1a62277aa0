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
	// LlamaCpp is the ggml-org/llama.cpp release linked in process: the prebuilt libllama, libggml and
	// CPU backends of npm @node-llama-cpp/linux-x64 at NodeLlamaCpp, and the mtmd source of the same
	// release from node-llama-cpp's git bundle (scripts/deps.sh; llm/llamacpp/internal/mtmd).
	LlamaCpp = "v0.4.0"
	// NodeLlamaCpp is the npm version of both node-llama-cpp packages.
	NodeLlamaCpp = "3.21.1"
	// LlamaCppSource is the commit of node-llama-cpp's bundle of that release (a squashed commit).
	LlamaCppSource = "80fb11ac73e66d89eae2c6a91d8a77428fa733ed"
	// GGML is the version and commit the prebuilt libggml-base reports (ggml_version, ggml_commit).
	GGML       = "0.23.0"
	GGMLCommit = "5b4ebc5"
	// ONNXRuntime is the libonnxruntime release taken from npm onnxruntime-node.
	ONNXRuntime = "1.30.0"
)
