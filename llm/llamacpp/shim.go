package llamacpp

/*
// Our own declarations of the pinned llama.cpp/mtmd C API and the exception-safe wrappers in shim.cpp.
// We call mtmd directly because the ollama wrapper fixes the image encoder at 4 threads (~1000x slower
// on 2 cores), decodes images from encoded bytes (a bad image crashes the process) and cannot free a
// llama_context.
#cgo CXXFLAGS: -std=c++17
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/framesweep/framesweep/rgb"
	"github.com/ollama/ollama/llama"
)

// cptr reads the C pointer that llama.Context and llama.Model keep in their first (unexported) field.
// The ollama version is pinned (v0.17.4); TestLeakCheck and the frame tests exercise these paths.
func cptr[T any](v *T) *unsafe.Pointer { return (*unsafe.Pointer)(unsafe.Pointer(v)) }

// freeContext releases a llama_context (the wrapper has no Free for it).
func freeContext(c *llama.Context) {
	if p := cptr(c); *p != nil {
		C.native_llama_free(*p)
		*p = nil
	}
}

func quietMtmd() { C.native_mtmd_quiet() }

// loadMu serialises model loads so that the error captured from llama.cpp's log is this load's.
var loadMu sync.Mutex

// loadModel loads a text model and returns, on failure, the first error llama.cpp logged while loading
// (its only report of the cause: LoadModelFromFile returns a generic error).
func loadModel(path string) (*llama.Model, string, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	C.native_log_capture_install() // after BackendInit, so it chains to ollama's callback
	C.native_log_capture_begin()
	m, err := llama.LoadModelFromFile(path, llama.ModelParams{UseMmap: true})
	var buf [1024]C.char
	C.native_log_capture_end(&buf[0], C.size_t(len(buf)))
	return m, logCause(C.GoString(&buf[0])), err
}

// logCause turns a llama.cpp log message ("llama_model_load: error loading model: unknown model
// architecture: 'x'\n") into one line without the function name and the repeated "error loading model".
func logCause(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if fn, rest, ok := strings.Cut(s, ": "); ok && !strings.Contains(fn, " ") {
		s = rest
	}
	return strings.TrimPrefix(s, "error loading model: ")
}

// mtmdCtx is our own mtmd context (vision projector), created with an explicit thread count.
type mtmdCtx struct{ c *C.mtmd_context }

func newMtmd(path string, m *llama.Model, threads int) (*mtmdCtx, error) {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	c := C.native_mtmd_init(cs, *cptr(m), C.int(threads))
	if c == nil {
		return nil, fmt.Errorf("mtmd_init_from_file failed")
	}
	return &mtmdCtx{c: c}, nil
}

// unsupported names a decoding mode this backend's plain 1-D batches cannot drive, or "".
func (m *mtmdCtx) unsupported() string {
	switch C.native_mtmd_unsupported(m.c) {
	case 0:
		return ""
	case 1:
		return "M-RoPE positions (Qwen2-VL family)"
	case 2:
		return "non-causal image attention (Gemma 3 family)"
	}
	return "a decoding mode it could not query"
}

func (m *mtmdCtx) free() {
	if m.c != nil {
		C.mtmd_free(m.c)
		m.c = nil
	}
}

// chunk is one piece of an image's tokenization: text tokens, or embeddings (n rows of nEmbd floats).
type chunk struct {
	tokens []int
	embeds [][]float32
}

// tokenizeImage runs the projector on one RGB frame and returns its chunks (text markers + embeddings).
func (m *mtmdCtx) tokenizeImage(img *rgb.Image, nEmbd int) ([]chunk, error) {
	pix := img.Packed()
	var status C.int32_t
	chunks := C.native_mtmd_tokenize_rgb(m.c, C.uint32_t(img.W), C.uint32_t(img.H), (*C.uchar)(unsafe.Pointer(&pix[0])), &status)
	if chunks == nil {
		return nil, fmt.Errorf("mtmd_tokenize: status %d", int32(status))
	}
	defer C.mtmd_input_chunks_free(chunks)
	var out []chunk
	for i := range int(C.mtmd_input_chunks_size(chunks)) {
		ch := C.mtmd_input_chunks_get(chunks, C.size_t(i))
		if C.mtmd_input_chunk_get_type(ch) == 0 { // MTMD_INPUT_CHUNK_TYPE_TEXT
			var n C.size_t
			p := C.mtmd_input_chunk_get_tokens_text(ch, &n)
			toks := make([]int, int(n))
			for j, t := range unsafe.Slice((*int32)(unsafe.Pointer(p)), int(n)) {
				toks[j] = int(t)
			}
			if len(toks) > 0 {
				out = append(out, chunk{tokens: toks})
			}
			continue
		}
		if rc := C.native_mtmd_encode_chunk(m.c, ch); rc != 0 {
			return nil, fmt.Errorf("mtmd_encode_chunk: status %d", int32(rc))
		}
		nTok := int(C.mtmd_input_chunk_get_n_tokens(ch))
		e := C.mtmd_get_output_embd(m.c)
		if e == nil {
			return nil, fmt.Errorf("mtmd: no image embedding")
		}
		flat := make([]float32, nTok*nEmbd)
		copy(flat, unsafe.Slice((*float32)(unsafe.Pointer(e)), nTok*nEmbd))
		rows := make([][]float32, nTok)
		for j := range rows {
			rows[j] = flat[j*nEmbd : (j+1)*nEmbd]
		}
		out = append(out, chunk{embeds: rows})
	}
	return out, nil
}
