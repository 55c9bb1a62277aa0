package llamacpp

/*
// Our own cgo layer over the llama.cpp C API of the prebuilt libllama/libggml and the mtmd library
// that package internal/mtmd compiles from the same release; see shim.h. The headers are the
// release's, from third_party/llama/src (scripts/deps.sh).
#cgo CXXFLAGS: -std=c++17
#cgo CPPFLAGS: -I${SRCDIR}/../../third_party/llama/src/include -I${SRCDIR}/../../third_party/llama/src/ggml/include -I${SRCDIR}/../../third_party/llama/src/tools/mtmd
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

	_ "github.com/framesweep/framesweep/llm/llamacpp/internal/mtmd" // mtmd and clip; links libllama, libggml
)

// errKVFull: llama_decode found no KV slot (status 1), the only status meaning "too long".
var errKVFull = errors.New("could not find a kv cache slot")

func decodeStatus(rc C.int32_t) error {
	switch {
	case rc == 0:
		return nil
	case rc == 1:
		return errKVFull
	}
	return fmt.Errorf("llama_decode status %d", int32(rc))
}

// loadMu serialises model loads so that the error captured from llama.cpp's log is this load's.
var loadMu sync.Mutex

// llModel is a loaded text model; free is idempotent.
type llModel struct{ p unsafe.Pointer }

// loadModel loads a text model and returns, on failure, the first error llama.cpp logged while
// loading (its only report of the cause).
func loadModel(path string, gpu *device, gpuLayers int) (*llModel, string, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	C.native_log_capture_begin()
	p := C.native_model_load(cs, gpu.handle(), C.int32_t(gpuLayers))
	var buf [1024]C.char
	C.native_log_capture_end(&buf[0], C.size_t(len(buf)))
	if p == nil {
		return nil, logCause(C.GoString(&buf[0])), fmt.Errorf("unable to load model: %s", path)
	}
	return &llModel{p: p}, "", nil
}

func (m *llModel) free() {
	if m != nil && m.p != nil {
		C.native_model_free(m.p)
		m.p = nil
	}
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

// mrope reports whether the text model takes 4-component M-RoPE positions (Qwen2-VL, Qwen3-VL text).
func (m *llModel) mrope() bool { return C.native_model_mrope(m.p) == 1 }

func (m *llModel) nVocab() int        { return int(C.native_vocab_n(m.p)) }
func (m *llModel) isEOG(tok int) bool { return C.native_token_is_eog(m.p, C.int32_t(tok)) == 1 }
func (m *llModel) embdWidth() int     { return int(C.native_embd_inp(m.p)) }
func (m *llModel) chatTemplate() string {
	if p := C.native_chat_template(m.p); p != nil {
		return C.GoString(p)
	}
	return ""
}

// tokenize returns the tokens of text (special tokens such as <|vision_start|> parsed when
// parseSpecial).
func (m *llModel) tokenize(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	if text == "" {
		return nil, nil
	}
	ct := C.CString(text)
	defer C.free(unsafe.Pointer(ct))
	out := make([]int32, len(text)+2)
	for range 2 {
		n := C.native_tokenize(m.p, ct, C.int32_t(len(text)), C.bool(addSpecial), C.bool(parseSpecial),
			(*C.int32_t)(unsafe.Pointer(&out[0])), C.int32_t(len(out)))
		switch {
		case n >= 0:
			return out[:n], nil
		case n == C.int32_t(-1<<31):
			return nil, errors.New("llama_tokenize failed")
		}
		out = make([]int32, -n)
	}
	return nil, errors.New("llama_tokenize: buffer size changed between calls")
}

// piece returns a token's text.
func (m *llModel) piece(tok int) string {
	buf := make([]byte, 16)
	for range 2 {
		n := int(C.native_token_piece(m.p, C.int32_t(tok), (*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf))))
		if n >= 0 {
			return string(buf[:n])
		}
		buf = make([]byte, -n)
	}
	return ""
}

// llContext is a llama_context with its token batch; free is idempotent.
type llContext struct {
	p, batch unsafe.Pointer
	nBatch   int
}

func newContext(m *llModel, nctx, nBatch, threads int) (*llContext, error) {
	p := C.native_context_new(m.p, C.int32_t(nctx), C.int32_t(nBatch), C.int32_t(threads))
	if p == nil {
		return nil, errors.New("unable to create llama context")
	}
	c := &llContext{p: p, nBatch: nBatch}
	if c.batch = C.native_batch_new(C.int32_t(nBatch)); c.batch == nil {
		C.native_context_free(p)
		return nil, fmt.Errorf("unable to allocate a batch of %d tokens", nBatch)
	}
	return c, nil
}

func (c *llContext) free() {
	if c != nil && c.batch != nil {
		C.native_batch_free(c.batch)
		c.batch = nil
	}
	if c != nil && c.p != nil {
		C.native_context_free(c.p)
		c.p = nil
	}
}

func (c *llContext) clear() { C.native_kv_clear(c.p) }

// decodeTokens decodes toks at positions pos, pos+1, …; with wantLogits it returns the last
// token's logits (a copy).
func (c *llContext) decodeTokens(toks []int32, pos int, wantLogits bool, nVocab int) ([]float32, error) {
	if len(toks) == 0 {
		return nil, nil
	}
	rc := C.native_decode_tokens(c.p, c.batch, (*C.int32_t)(unsafe.Pointer(&toks[0])), C.int32_t(len(toks)), C.int32_t(pos), C.bool(wantLogits))
	if err := decodeStatus(rc); err != nil {
		return nil, err
	}
	if !wantLogits {
		return nil, nil
	}
	l := C.native_logits_last(c.p)
	if l == nil {
		return nil, errors.New("no logits")
	}
	return append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(l)), nVocab)...), nil
}

// decodeEmbd decodes n embeddings (C memory) at pos (dimension-major, nPer values per embedding).
func (c *llContext) decodeEmbd(embd *C.float, n int, pos []int32, nPer int, nonCausal bool) error {
	if n == 0 {
		return nil
	}
	if len(pos) != n*nPer {
		return fmt.Errorf("%d positions for %d embeddings of %d components", len(pos), n, nPer)
	}
	rc := C.native_decode_embd(c.p, embd, C.int32_t(n), (*C.int32_t)(unsafe.Pointer(&pos[0])), C.int32_t(nPer), C.int32_t(c.nBatch), C.bool(nonCausal))
	return decodeStatus(rc)
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
