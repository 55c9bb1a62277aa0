// Package mtmd compiles llama.cpp's multimodal library (tools/mtmd: mtmd, clip and the vision graph
// builders of models/) from the source of the pinned release, which scripts/deps.sh takes from
// node-llama-cpp's git bundle into third_party/llama/src (not copied into this repository), and links
// it against the prebuilt libllama, libggml and libggml-base of the same release in
// third_party/llama/lib. The binary finds those libraries through its run path (set here, relative to
// the executable), so bin/framesweep runs without an environment of its own. No patch is applied: the
// temporal merge of Qwen-VL video frames that framesweep used to patch in is upstream's now
// (mtmd_bitmap_set_mergeable).
//
// The .cpp files here are generated wrappers, one per upstream source, each including it (cgo compiles
// only files in a package's own directory): `go generate` rewrites them from the release's
// tools/mtmd/CMakeLists.txt, and TestSources fails when they differ.
package mtmd

//go:generate go run ./gen

/*
// mtmd is not on a hot path (the frames arrive resized; ggml, prebuilt, does the arithmetic): -O1
// halves its compile time against the -O3 of scripts/env.sh, which comes first on the command line.
// The run path is relative to the executable only ($ORIGIN/../third_party/llama/lib beside
// bin/framesweep, as DT_RUNPATH): a copied binary loads the libraries installed beside it, never the
// build checkout's. LD_LIBRARY_PATH, which the loader searches before DT_RUNPATH, is the override
// (scripts/env.sh sets it for `go test` binaries, which run from a temporary directory).
#cgo CPPFLAGS: -I${SRCDIR}/../../../../third_party/llama/src/include -I${SRCDIR}/../../../../third_party/llama/src/ggml/include -I${SRCDIR}/../../../../third_party/llama/src/tools/mtmd
#cgo CXXFLAGS: -std=c++17 -O1
#cgo LDFLAGS: -L${SRCDIR}/../../../../third_party/llama/lib -lllama -lggml -lggml-base -ldl
#cgo LDFLAGS: -Wl,--enable-new-dtags -Wl,-rpath,$ORIGIN/../third_party/llama/lib
*/
import "C"
