package llamacpp

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/framesweep/framesweep/rgb"
)

// mtmdCtx is our mtmd context (vision projector), created with an explicit thread count; free is
// idempotent.
type mtmdCtx struct {
	p       unsafe.Pointer
	threads int
}

func newMtmd(path string, m *llModel, threads, minTokens, maxTokens int, gpu *device) (*mtmdCtx, error) {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	p := C.native_mtmd_init(cs, m.p, C.int(threads), C.int(minTokens), C.int(maxTokens), gpu.handle())
	if p == nil {
		return nil, fmt.Errorf("mtmd_init_from_file failed")
	}
	return &mtmdCtx{p: p, threads: threads}, nil
}

func (m *mtmdCtx) free() {
	if m != nil && m.p != nil {
		C.native_mtmd_free(m.p)
		m.p = nil
	}
}

// vision reports whether the projector has a vision encoder.
func (m *mtmdCtx) vision() bool { return C.native_mtmd_vision(m.p) == 1 }

// mrope reports whether the projector's embeddings take M-RoPE positions (the Qwen2-VL family).
func (m *mtmdCtx) mrope() bool { return C.native_mtmd_mrope(m.p) == 1 }

func (m *mtmdCtx) nonCausal() bool { return C.native_mtmd_non_causal(m.p) == 1 }

// Chunk types of mtmd_input_chunk_type.
const (
	chunkText  = 0
	chunkImage = 1
)

// chunk is one piece of a tokenized frame: marker text or the image.
type chunk struct {
	typ          int
	tokens       []int32 // text chunks
	nTok, nPos   int     // KV cells and positions it takes
	gridW, gridH int     // image token grid (M-RoPE); nTok × 1 otherwise
}

// frame is one tokenized frame, or temporal pair of frames (mtmd chunks: the family's marker tokens
// and the preprocessed image), owned by the Answer call that made it; free is idempotent.
type frame struct {
	p      unsafe.Pointer
	chunks []chunk
}

// tokenizeFrame preprocesses one RGB frame (mtmd_bitmap_init copies it; the projector resizes it as
// its family does), or with b not nil the temporal pair (img, b) of a Qwen2-VL-family video, which
// upstream mtmd merges into one image chunk (img through the patch embedding's kernel 0, b through
// kernel 1). The frame holds C memory until free.
func (m *mtmdCtx) tokenizeFrame(img, b *rgb.Image) (*frame, error) {
	pix := img.Packed()
	var second *C.uchar
	if b != nil {
		if b.W != img.W || b.H != img.H {
			return nil, fmt.Errorf("frames of a pair differ in size (%dx%d, %dx%d)", img.W, img.H, b.W, b.H)
		}
		pb := b.Packed()
		second = (*C.uchar)(unsafe.Pointer(&pb[0]))
	}
	var status C.int32_t
	p := C.native_mtmd_tokenize_rgb(m.p, C.uint32_t(img.W), C.uint32_t(img.H), (*C.uchar)(unsafe.Pointer(&pix[0])), second, &status)
	if p == nil {
		return nil, fmt.Errorf("mtmd_tokenize: status %d", int32(status))
	}
	live.Add(1)
	f := &frame{p: p}
	for i := range int(C.native_chunks_n(p)) {
		var typ, n, nx, ny, npos C.int32_t
		if C.native_chunk_info(p, C.int32_t(i), &typ, &n, &nx, &ny, &npos) != 0 {
			f.free()
			return nil, fmt.Errorf("mtmd chunk %d unreadable", i)
		}
		c := chunk{typ: int(typ), nTok: int(n), nPos: int(npos), gridW: int(nx), gridH: int(ny)}
		if c.typ == chunkText {
			var k C.int32_t
			t := C.native_chunk_text(p, C.int32_t(i), &k)
			if k > 0 {
				c.tokens = append([]int32(nil), unsafe.Slice((*int32)(unsafe.Pointer(t)), int(k))...)
			}
		}
		f.chunks = append(f.chunks, c)
	}
	return f, nil
}

func (f *frame) free() {
	if f != nil && f.p != nil {
		C.native_chunks_free(f.p)
		f.p = nil
		live.Add(-1)
	}
}

// encode runs the vision encoder on image chunk i; the embeddings are mtmd's, valid until the next
// encode.
func (m *mtmdCtx) encode(f *frame, i int) (*C.float, error) {
	e := C.native_chunk_encode(m.p, f.p, C.int32_t(i))
	if e == nil {
		return nil, fmt.Errorf("mtmd_encode_chunk failed")
	}
	return e, nil
}

// image returns the index of the frame's image chunk (a frame or pair tokenizes to exactly one).
func (f *frame) image() (int, error) {
	k := -1
	for i, c := range f.chunks {
		if c.typ == chunkImage {
			if k >= 0 {
				return 0, fmt.Errorf("mtmd made %d image chunks of one frame", 2)
			}
			k = i
		}
	}
	if k < 0 {
		return 0, fmt.Errorf("mtmd made no image chunk")
	}
	return k, nil
}

// embeddingsOf returns a copy of the embeddings of frame img encoded as an image, or of the pair
// (img, b) when b is not nil (tests compare the two paths).
func (m *mtmdCtx) embeddingsOf(img, b *rgb.Image, width int) ([]float32, error) {
	f, err := m.tokenizeFrame(img, b)
	if err != nil {
		return nil, err
	}
	defer f.free()
	k, err := f.image()
	if err != nil {
		return nil, err
	}
	e, err := m.encode(f, k)
	if err != nil {
		return nil, err
	}
	return append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(e)), f.chunks[k].nTok*width)...), nil
}
