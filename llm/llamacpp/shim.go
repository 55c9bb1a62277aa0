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
	"errors"
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

// noEmbeddings turns off the embedding output of a context (see native_llama_no_embeddings).
func noEmbeddings(c *llama.Context) { C.native_llama_no_embeddings(*cptr(c)) }

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
	// A progress callback of our own: without one llama.cpp prints a row of dots on stderr.
	m, err := llama.LoadModelFromFile(path, llama.ModelParams{UseMmap: true, Progress: func(float32) {}})
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

func newMtmd(path string, m *llama.Model, threads, minTokens, maxTokens int) (*mtmdCtx, error) {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	c := C.native_mtmd_init(cs, *cptr(m), C.int(threads), C.int(minTokens), C.int(maxTokens))
	if c == nil {
		return nil, fmt.Errorf("mtmd_init_from_file failed")
	}
	return &mtmdCtx{c: c}, nil
}

// vision reports whether the projector has a vision encoder.
func (m *mtmdCtx) vision() bool { return C.native_mtmd_vision(m.c) == 1 }

// mrope reports whether the projector's embeddings take M-RoPE positions (the Qwen2-VL family).
func (m *mtmdCtx) mrope() bool { return C.native_mtmd_mrope(m.c) == 1 }

// modelMRoPE reports whether a text model takes 4-component M-RoPE positions (Qwen2-VL, Qwen3-VL text).
func modelMRoPE(m *llama.Model) bool { return C.native_model_mrope(*cptr(m)) == 1 }

func (m *mtmdCtx) free() {
	if m.c != nil {
		C.mtmd_free(m.c)
		m.c = nil
	}
}

// frame is one tokenized frame (mtmd chunks: the family's marker tokens and the preprocessed image),
// owned by the Answer call that made it; free is idempotent.
type frame struct {
	c    *C.mtmd_input_chunks
	nTok int // KV cells the frame takes
	nPos int // positions it advances (max(w, h) of its token grid under M-RoPE, nTok otherwise)
}

// tokenizeFrame preprocesses one RGB frame (mtmd_bitmap_init copies it; the projector resizes it as its
// family does). The frame holds C memory until free.
func (m *mtmdCtx) tokenizeFrame(img *rgb.Image) (*frame, error) {
	pix := img.Packed()
	var status C.int32_t
	chunks := C.native_mtmd_tokenize_rgb(m.c, C.uint32_t(img.W), C.uint32_t(img.H), (*C.uchar)(unsafe.Pointer(&pix[0])), &status)
	if chunks == nil {
		return nil, fmt.Errorf("mtmd_tokenize: status %d", int32(status))
	}
	live.Add(1)
	return &frame{c: chunks, nTok: int(C.mtmd_helper_get_n_tokens(chunks)), nPos: int(C.mtmd_helper_get_n_pos(chunks))}, nil
}

func (f *frame) free() {
	if f != nil && f.c != nil {
		C.mtmd_input_chunks_free(f.c)
		f.c = nil
		live.Add(-1)
	}
}

// eval encodes the frame and decodes it into lctx from position pos; it returns the next position.
func (m *mtmdCtx) eval(lctx *llama.Context, f *frame, pos, nBatch int) (int, error) {
	var next C.int32_t
	if rc := C.native_mtmd_eval_chunks(m.c, *cptr(lctx), f.c, C.int32_t(pos), C.int32_t(nBatch), &next); rc != 0 {
		return 0, fmt.Errorf("mtmd_helper_eval_chunks: status %d", int32(rc))
	}
	return int(next), nil
}

// chatTemplate returns the model's tokenizer.chat_template, or "".
func chatTemplate(m *llama.Model) string {
	if p := C.native_chat_template(*cptr(m)); p != nil {
		return C.GoString(p)
	}
	return ""
}

// errTemplate: llama.cpp's formatter does not know the template.
var errTemplate = errors.New("not a chat template llama.cpp's built-in formatter (llama_chat_apply_template) knows")

// applyChat formats [system,] user and the generation prompt with tmpl through llama.cpp's built-in
// formatter (a fixed list of template families detected from the Jinja text; no Jinja engine).
func applyChat(tmpl, system, user string) (string, error) {
	ct := C.CString(tmpl)
	defer C.free(unsafe.Pointer(ct))
	cu := C.CString(user)
	defer C.free(unsafe.Pointer(cu))
	var cs *C.char
	if system != "" {
		cs = C.CString(system)
		defer C.free(unsafe.Pointer(cs))
	}
	buf := make([]byte, 2*(len(tmpl)+len(system)+len(user))+256)
	for range 2 {
		n := C.native_chat_apply(ct, cs, cu, (*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf)))
		if n < 0 {
			return "", errTemplate
		}
		if int(n) <= len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, int(n))
	}
	return "", errTemplate
}
