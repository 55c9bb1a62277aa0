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

func newMtmd(path string, m *llModel, threads, minTokens, maxTokens int) (*mtmdCtx, error) {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	p := C.native_mtmd_init(cs, m.p, C.int(threads), C.int(minTokens), C.int(maxTokens))
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

// frame is one tokenized frame (mtmd chunks: the family's marker tokens and the preprocessed image),
// owned by the Answer call that made it; free is idempotent.
type frame struct {
	p      unsafe.Pointer
	chunks []chunk
}

// tokenizeFrame preprocesses one RGB frame (mtmd_bitmap_init copies it; the projector resizes it as
// its family does). The frame holds C memory until free.
func (m *mtmdCtx) tokenizeFrame(img *rgb.Image) (*frame, error) {
	pix := img.Packed()
	var status C.int32_t
	p := C.native_mtmd_tokenize_rgb(m.p, C.uint32_t(img.W), C.uint32_t(img.H), (*C.uchar)(unsafe.Pointer(&pix[0])), &status)
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

// pair is two frames held as one clip image for the Conv3d patch embedding (patches/0001), owned
// by the Answer call that made it; free is idempotent.
type pair struct {
	p            unsafe.Pointer
	nTok         int
	gridW, gridH int
}

// newPair preprocesses frames a and b (one size) as the projector resizes images.
func (m *mtmdCtx) newPair(a, b *rgb.Image) (*pair, error) {
	if a.W != b.W || a.H != b.H {
		return nil, fmt.Errorf("frames of a pair differ in size (%dx%d, %dx%d)", a.W, a.H, b.W, b.H)
	}
	pa, pb := a.Packed(), b.Packed()
	var n, nx, ny, status C.int32_t
	p := C.native_pair_new(m.p, C.uint32_t(a.W), C.uint32_t(a.H), (*C.uchar)(unsafe.Pointer(&pa[0])), (*C.uchar)(unsafe.Pointer(&pb[0])), &n, &nx, &ny, &status)
	if p == nil {
		return nil, fmt.Errorf("preprocessing the pair failed (status %d)", int32(status))
	}
	live.Add(1)
	return &pair{p: p, nTok: int(n), gridW: int(nx), gridH: int(ny)}, nil
}

// encode runs both frames through the vision encoder; the embeddings are the pair's until free.
func (m *mtmdCtx) encodePair(p *pair) (*C.float, error) {
	e := C.native_pair_encode(m.p, p.p, C.int(m.threads))
	if e == nil {
		return nil, fmt.Errorf("clip_image_batch_encode failed on the pair")
	}
	return e, nil
}

func (p *pair) free() {
	if p != nil && p.p != nil {
		C.native_pair_free(p.p)
		p.p = nil
		live.Add(-1)
	}
}

// embeddingsOf returns a copy of the embeddings of frame img encoded as an image (its first image
// chunk), or of the pair (img, b) when b is not nil (tests compare the two paths).
func (m *mtmdCtx) embeddingsOf(img, b *rgb.Image, width int) ([]float32, error) {
	if b != nil {
		p, err := m.newPair(img, b)
		if err != nil {
			return nil, err
		}
		defer p.free()
		e, err := m.encodePair(p)
		if err != nil {
			return nil, err
		}
		return append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(e)), p.nTok*width)...), nil
	}
	f, err := m.tokenizeFrame(img)
	if err != nil {
		return nil, err
	}
	defer f.free()
	for k, c := range f.chunks {
		if c.typ == chunkImage {
			e, err := m.encode(f, k)
			if err != nil {
				return nil, err
			}
			return append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(e)), c.nTok*width)...), nil
		}
	}
	return nil, fmt.Errorf("no image chunk")
}
