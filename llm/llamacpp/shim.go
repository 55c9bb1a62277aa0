package llamacpp

/*
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

// Declarations of the llama.cpp / mtmd C API (llama.cpp ec98e2002, vendored by ollama v0.17.4, whose
// `llama` package compiles and links them into the binary). They copy tools/mtmd/mtmd.h and
// include/llama.h of that commit; the module version is pinned in go.mod. We call mtmd directly because
// the ollama wrapper fixes the image encoder at 4 threads (~1000x slower on 2 cores), decodes images
// from encoded bytes (a bad image crashes the process) and cannot free a llama_context.
struct llama_context;
struct llama_model;
typedef struct mtmd_context mtmd_context;
typedef struct mtmd_bitmap mtmd_bitmap;
typedef struct mtmd_input_chunks mtmd_input_chunks;
typedef struct mtmd_input_chunk mtmd_input_chunk;

struct mtmd_context_params {
	bool use_gpu;
	bool print_timings;
	int n_threads;
	const char * image_marker;
	const char * media_marker;
	int flash_attn_type; // enum llama_flash_attn_type
	bool warmup;
	int image_min_tokens;
	int image_max_tokens;
};
struct mtmd_input_text {
	const char * text;
	bool add_special;
	bool parse_special;
};

extern void llama_free(struct llama_context * ctx);
extern struct mtmd_context_params mtmd_context_params_default(void);
extern mtmd_context * mtmd_init_from_file(const char * mmproj_fname, const struct llama_model * text_model, const struct mtmd_context_params ctx_params);
extern void mtmd_free(mtmd_context * ctx);
extern const char * mtmd_default_marker(void);
extern mtmd_bitmap * mtmd_bitmap_init(uint32_t nx, uint32_t ny, const unsigned char * data);
extern void mtmd_bitmap_free(mtmd_bitmap * bitmap);
extern mtmd_input_chunks * mtmd_input_chunks_init(void);
extern size_t mtmd_input_chunks_size(const mtmd_input_chunks * chunks);
extern const mtmd_input_chunk * mtmd_input_chunks_get(const mtmd_input_chunks * chunks, size_t idx);
extern void mtmd_input_chunks_free(mtmd_input_chunks * chunks);
extern int mtmd_input_chunk_get_type(const mtmd_input_chunk * chunk); // enum mtmd_input_chunk_type
extern const int32_t * mtmd_input_chunk_get_tokens_text(const mtmd_input_chunk * chunk, size_t * n_tokens_output);
extern size_t mtmd_input_chunk_get_n_tokens(const mtmd_input_chunk * chunk);
extern int32_t mtmd_tokenize(mtmd_context * ctx, mtmd_input_chunks * output, const struct mtmd_input_text * text, const mtmd_bitmap ** bitmaps, size_t n_bitmaps);
extern int32_t mtmd_encode_chunk(mtmd_context * ctx, const mtmd_input_chunk * chunk);
extern float * mtmd_get_output_embd(mtmd_context * ctx);
extern bool mtmd_decode_use_mrope(mtmd_context * ctx);
extern bool mtmd_decode_use_non_causal(mtmd_context * ctx);

static void native_llama_free(void * ctx) { llama_free((struct llama_context *)ctx); }

static mtmd_context * native_mtmd_init(const char * path, void * model, int n_threads) {
	struct mtmd_context_params p = mtmd_context_params_default();
	p.n_threads = n_threads;
	p.use_gpu = false;
	p.print_timings = false;
	p.warmup = false;
	return mtmd_init_from_file(path, (const struct llama_model *)model, p);
}

// native_mtmd_tokenize_rgb tokenizes one packed RGB24 image (copied by mtmd_bitmap_init). The marker
// text is tokenized without special tokens, so no BOS lands in mid-prompt.
static mtmd_input_chunks * native_mtmd_tokenize_rgb(mtmd_context * ctx, uint32_t w, uint32_t h, const unsigned char * rgb, int32_t * status) {
	mtmd_bitmap * bm = mtmd_bitmap_init(w, h, rgb);
	if (bm == NULL) { *status = -1; return NULL; }
	mtmd_input_chunks * chunks = mtmd_input_chunks_init();
	struct mtmd_input_text txt = { mtmd_default_marker(), false, true };
	const mtmd_bitmap * bms[1] = { bm };
	*status = mtmd_tokenize(ctx, chunks, &txt, bms, 1);
	mtmd_bitmap_free(bm);
	if (*status != 0) { mtmd_input_chunks_free(chunks); return NULL; }
	return chunks;
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/framesweep/framesweep/internal/rgb"
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
	switch {
	case bool(C.mtmd_decode_use_mrope(m.c)):
		return "M-RoPE positions (Qwen2-VL family)"
	case bool(C.mtmd_decode_use_non_causal(m.c)):
		return "non-causal image attention (Gemma 3 family)"
	}
	return ""
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
		if rc := C.mtmd_encode_chunk(m.c, ch); rc != 0 {
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
