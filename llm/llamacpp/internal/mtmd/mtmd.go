// Package mtmd compiles llama.cpp's multimodal library (tools/mtmd: clip, mtmd and the vision graph
// builders of models/) from the copy that the pinned github.com/ollama/ollama v0.17.4 vendors
// (llama.cpp ec98e2002), with a small patch set of ours (patches/): temporal frame pairs through the
// two patch kernels of the Qwen2-VL-family vision encoders, and an accessor for mtmd's clip context.
// It replaces ollama's own mtmd package, which the build no longer links (llm/llamacpp calls the
// llama.cpp C API itself), so its symbols exist once. README.md says what changed and why.
//
// Regenerate the sources with `go run ./llm/llamacpp/internal/mtmd/upstream/cmd/sync`;
// TestVendoredSources fails when they differ from upstream + patches.
package mtmd

//go:generate go run ./upstream/cmd/sync

// #cgo CXXFLAGS: -std=c++17
// #cgo CPPFLAGS: -I${SRCDIR}/include
import "C"

import (
	_ "github.com/framesweep/framesweep/llm/llamacpp/internal/mtmd/models"
	_ "github.com/ollama/ollama/llama/llama.cpp/src"      // libllama: the text model mtmd reads its sizes from
	_ "github.com/ollama/ollama/ml/backend/ggml/ggml/src" // ggml and its CPU backend
)
