// Declarations of the llama.cpp / mtmd C API (llama.cpp ec98e2002, vendored by ollama v0.17.4, whose
// `llama` package compiles and links them into the binary). They copy tools/mtmd/mtmd.h and
// include/llama.h of that commit; the module version is pinned in go.mod.
#ifndef FRAMESWEEP_LLAMACPP_SHIM_H
#define FRAMESWEEP_LLAMACPP_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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

void llama_free(struct llama_context * ctx);
struct mtmd_context_params mtmd_context_params_default(void);
mtmd_context * mtmd_init_from_file(const char * mmproj_fname, const struct llama_model * text_model, const struct mtmd_context_params ctx_params);
void mtmd_free(mtmd_context * ctx);
const char * mtmd_default_marker(void);
mtmd_bitmap * mtmd_bitmap_init(uint32_t nx, uint32_t ny, const unsigned char * data);
void mtmd_bitmap_free(mtmd_bitmap * bitmap);
mtmd_input_chunks * mtmd_input_chunks_init(void);
size_t mtmd_input_chunks_size(const mtmd_input_chunks * chunks);
const mtmd_input_chunk * mtmd_input_chunks_get(const mtmd_input_chunks * chunks, size_t idx);
void mtmd_input_chunks_free(mtmd_input_chunks * chunks);
int mtmd_input_chunk_get_type(const mtmd_input_chunk * chunk); // enum mtmd_input_chunk_type
const int32_t * mtmd_input_chunk_get_tokens_text(const mtmd_input_chunk * chunk, size_t * n_tokens_output);
size_t mtmd_input_chunk_get_n_tokens(const mtmd_input_chunk * chunk);
int32_t mtmd_tokenize(mtmd_context * ctx, mtmd_input_chunks * output, const struct mtmd_input_text * text, const mtmd_bitmap ** bitmaps, size_t n_bitmaps);
int32_t mtmd_encode_chunk(mtmd_context * ctx, const mtmd_input_chunk * chunk);
float * mtmd_get_output_embd(mtmd_context * ctx);
bool mtmd_decode_use_mrope(mtmd_context * ctx);
bool mtmd_decode_use_non_causal(mtmd_context * ctx);
typedef void (*native_log_callback)(int level, const char * text, void * user_data); // ggml_log_callback
void mtmd_log_set(native_log_callback log_callback, void * user_data);
void llama_log_get(native_log_callback * log_callback, void ** user_data);
void llama_log_set(native_log_callback log_callback, void * user_data);

// Our entry points (shim.cpp): each catches C++ exceptions and reports them as a status, so a throw
// inside llama.cpp becomes a Go error instead of std::terminate.
void native_llama_free(void * ctx);
mtmd_context * native_mtmd_init(const char * path, void * model, int n_threads);
mtmd_input_chunks * native_mtmd_tokenize_rgb(mtmd_context * ctx, uint32_t w, uint32_t h, const unsigned char * rgb, int32_t * status);
int32_t native_mtmd_encode_chunk(mtmd_context * ctx, const mtmd_input_chunk * chunk);
int native_mtmd_unsupported(mtmd_context * ctx); // 1 = M-RoPE, 2 = non-causal, 0 = supported, -1 = error
void native_mtmd_quiet(void); // mtmd/clip logs: warnings and errors only, to stderr
// llama.cpp reports why a model failed to load only through its log. native_log_capture_install chains
// a callback in front of the current one (ollama's) that keeps the first error message logged between
// native_log_capture_begin and native_log_capture_end; end copies it (NUL-terminated) into buf.
void native_log_capture_install(void);
void native_log_capture_begin(void);
void native_log_capture_end(char * buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
