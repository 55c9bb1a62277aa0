// Our C entry points into llama.cpp and mtmd (shim.cpp), compiled against the headers of the pinned
// llama.cpp release (third_party/llama/src, see package internal/mtmd). Go sees only these functions
// and opaque pointers; every one of them catches C++ exceptions and reports a status, so a throw
// inside llama.cpp becomes a Go error instead of std::terminate.
#ifndef FRAMESWEEP_LLAMACPP_SHIM_H
#define FRAMESWEEP_LLAMACPP_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// native_backend_init: llama.cpp's, ggml's and mtmd's logs routed through ours (errors on stderr, the
// rest only at FRAMESWEEP_LLAMA_LOG's level; the load-error capture below chained in front), the ggml
// CPU backend library cpu_lib registered (chosen in Go among the checked ones), and
// llama_backend_init. It returns 0, or -1 with the reason in err (NUL-terminated).
int native_backend_init(int log_level, const char * cpu_lib, char * err, size_t n);
// native_lib_dir writes the directory libllama was loaded from (NUL-terminated); 0 on success.
int native_lib_dir(char * buf, size_t n);
// native_backends writes the loaded backends, one "name\tdetail" line each (detail: the CPU backend's
// library variant, a GPU's description); it returns the length written (may exceed n: call again).
int32_t native_backends(char * buf, int32_t n);
// native_gpu_load loads the CUDA backend library at path (once) and returns the number of CUDA
// devices, or -1 with dlopen's reason (which names a missing CUDA library) in err.
int native_gpu_load(const char * path, char * err, size_t n);
// native_gpu_device: the i-th GPU device's handle (NULL when there is none); its description in desc.
void * native_gpu_device(int i, char * desc, size_t n);

// Text model and context.
// native_model_load loads a text model on the CPU, or with gpu != NULL its first gpu_layers layers
// (negative: all) on that device. NULL on failure (the reason is in the log).
void * native_model_load(const char * path, void * gpu, int32_t gpu_layers);
void native_model_free(void * model);
int native_model_mrope(void * model);               // 1: 4-component (M-RoPE / interleaved M-RoPE) positions
int32_t native_vocab_n(void * model);
int native_token_is_eog(void * model, int32_t token);
// native_tokenize writes up to cap tokens; it returns their number, or minus the number needed.
int32_t native_tokenize(void * model, const char * text, int32_t len, bool add_special, bool parse_special, int32_t * out, int32_t cap);
// native_token_piece writes the token's text (no NUL); it returns its length, or minus the length needed.
int32_t native_token_piece(void * model, int32_t token, char * buf, int32_t cap);
// native_context_new: n_ctx cells, batches of n_batch, threads for both generation and prompts, no
// flash attention, no embedding output (only logits are read; with it on the pinned llama.cpp aborts
// in llama_decode for Qwen3-VL, copying n_embd_inp-wide deepstack rows into an n_embd-wide buffer).
void * native_context_new(void * model, int32_t n_ctx, int32_t n_batch, int32_t threads);
void native_context_free(void * lctx);
void native_kv_clear(void * lctx);
void * native_batch_new(int32_t n);                 // a token batch of n entries (sequence 0)
void native_batch_free(void * batch);
// native_decode_tokens decodes n tokens at positions pos0, pos0+1, … in slices of the batch's size;
// the logits of the last token are kept when logits_last. 0 on success, 1 when the KV cache is full,
// another value on another failure.
int32_t native_decode_tokens(void * lctx, void * batch, const int32_t * tokens, int32_t n, int32_t pos0, bool logits_last);
// native_decode_embd decodes n embeddings (n × n_embd floats) with explicit positions: pos holds
// n_pos_per_embd × n values, dimension-major (all t, then all h, all w, all e under M-RoPE). Status as
// above.
int32_t native_decode_embd(void * lctx, const float * embd, int32_t n, const int32_t * pos, int32_t n_pos_per_embd, int32_t n_batch, bool non_causal);
const float * native_logits_last(void * lctx);      // the last decoded logits (n_vocab floats), NULL if none
int32_t native_embd_inp(void * model);              // width of an input embedding (n_embd × (1 + deepstack layers))

// Chat templates.
const char * native_chat_template(void * model);    // tokenizer.chat_template (borrowed until the model is freed) or NULL
// native_chat_apply formats an optional system turn and a user turn with llama_chat_apply_template and
// the generation prompt; it returns the formatted length (may exceed len: call again with a larger
// buffer) or a negative value when the template is not one llama.cpp's formatter knows.
int32_t native_chat_apply(const char * tmpl, const char * system, const char * user, char * buf, int32_t len);

// Vision projector (mtmd).
// native_mtmd_init loads the projector, on gpu when it is not NULL.
void * native_mtmd_init(const char * path, void * model, int n_threads, int min_tokens, int max_tokens, void * gpu);
void native_mtmd_free(void * mtmd);
int native_mtmd_vision(void * mtmd);                // 1 with a vision encoder, 0 without, -1 on error
int native_mtmd_mrope(void * mtmd);                 // 1 when its embeddings take M-RoPE positions
int native_mtmd_non_causal(void * mtmd);            // 1 when its embeddings are decoded without the causal mask
// native_mtmd_tokenize_rgb tokenizes one packed RGB24 image (mtmd_bitmap_init copies it) behind the
// family's markers; with b not NULL, two frames of one size as one temporal pair (both bitmaps
// mergeable: upstream mtmd merges them into one image chunk of a Qwen2-VL-family video, frame a
// through the patch embedding's kernel 0, b through kernel 1). The returned chunks are freed with
// native_chunks_free.
void * native_mtmd_tokenize_rgb(void * mtmd, uint32_t w, uint32_t h, const unsigned char * rgb, const unsigned char * b, int32_t * status);
void native_chunks_free(void * chunks);
int32_t native_chunks_n(void * chunks);
// native_chunk_info: type (0 text, 1 image, 2 audio), KV cells, token grid (nx × ny under M-RoPE,
// else n × 1) and positions the chunk takes.
int native_chunk_info(void * chunks, int32_t i, int32_t * type, int32_t * n_tokens, int32_t * nx, int32_t * ny, int32_t * n_pos);
const int32_t * native_chunk_text(void * chunks, int32_t i, int32_t * n); // a text chunk's tokens (borrowed)
// native_chunk_encode runs the vision encoder on image chunk i; the embeddings (n_tokens × n_embd_inp
// floats) are borrowed until the next encode. NULL on failure.
const float * native_chunk_encode(void * mtmd, void * chunks, int32_t i);

// llama.cpp reports why a model failed to load only through its log: the capture keeps the first
// error logged between begin and end; end copies it (NUL-terminated) into buf.
void native_log_capture_begin(void);
void native_log_capture_end(char * buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
