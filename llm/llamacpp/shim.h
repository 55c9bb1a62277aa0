// Declarations of the llama.cpp / mtmd C API (llama.cpp ec98e2002, vendored by ollama v0.17.4, whose
// `llama` package compiles and links them into the binary). They copy tools/mtmd/mtmd.h, tools/mtmd/mtmd-helper.h and
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
void llama_set_embeddings(struct llama_context * ctx, bool embeddings);
struct mtmd_context_params mtmd_context_params_default(void);
mtmd_context * mtmd_init_from_file(const char * mmproj_fname, const struct llama_model * text_model, const struct mtmd_context_params ctx_params);
void mtmd_free(mtmd_context * ctx);
const char * mtmd_default_marker(void);
mtmd_bitmap * mtmd_bitmap_init(uint32_t nx, uint32_t ny, const unsigned char * data);
void mtmd_bitmap_free(mtmd_bitmap * bitmap);
mtmd_input_chunks * mtmd_input_chunks_init(void);
void mtmd_input_chunks_free(mtmd_input_chunks * chunks);
int32_t mtmd_tokenize(mtmd_context * ctx, mtmd_input_chunks * output, const struct mtmd_input_text * text, const mtmd_bitmap ** bitmaps, size_t n_bitmaps);
bool mtmd_decode_use_mrope(mtmd_context * ctx);
bool mtmd_support_vision(mtmd_context * ctx);
typedef void (*native_log_callback)(int level, const char * text, void * user_data); // ggml_log_callback
void llama_log_get(native_log_callback * log_callback, void ** user_data);
void llama_log_set(native_log_callback log_callback, void * user_data);
// tools/mtmd/mtmd-helper.h (compiled into the same mtmd package).
void mtmd_helper_log_set(native_log_callback log_callback, void * user_data);
size_t mtmd_helper_get_n_tokens(const mtmd_input_chunks * chunks);
int32_t mtmd_helper_get_n_pos(const mtmd_input_chunks * chunks); // llama_pos
int32_t mtmd_helper_eval_chunks(mtmd_context * ctx, struct llama_context * lctx, const mtmd_input_chunks * chunks,
                                int32_t n_past, int32_t seq_id, int32_t n_batch, bool logits_last, int32_t * new_n_past);
// include/llama.h: the GGUF's chat template and llama.cpp's built-in (non-Jinja) formatter.
struct llama_chat_message {
	const char * role;
	const char * content;
};
const char * llama_model_chat_template(const struct llama_model * model, const char * name);
int llama_model_rope_type(const struct llama_model * model); // enum llama_rope_type
int32_t llama_chat_apply_template(const char * tmpl, const struct llama_chat_message * chat, size_t n_msg, bool add_ass, char * buf, int32_t length);

// Our entry points (shim.cpp): each catches C++ exceptions and reports them as a status, so a throw
// inside llama.cpp becomes a Go error instead of std::terminate.
void native_llama_free(void * ctx);
// native_llama_no_embeddings turns off the context's embedding output (ollama's context parameters turn
// it on). Only logits are read; and with it on, a Qwen3-VL (deepstack) text model aborts in
// llama_decode: the pinned llama.cpp copies n_embd_inp-wide rows into an n_embd-wide buffer.
void native_llama_no_embeddings(void * ctx);
// native_mtmd_init loads a projector with n_threads for its encoder; min/max_tokens (> 0) bound the
// tokens per image of dynamic-resolution projectors (llama-server's --image-min/max-tokens).
mtmd_context * native_mtmd_init(const char * path, void * model, int n_threads, int min_tokens, int max_tokens);
mtmd_input_chunks * native_mtmd_tokenize_rgb(mtmd_context * ctx, uint32_t w, uint32_t h, const unsigned char * rgb, int32_t * status);
// native_mtmd_eval_chunks runs mtmd_helper_eval_chunks from position n_past (sequence 0): the image
// encoder, then llama_decode of the embeddings with the positions the projector needs (M-RoPE 2-D
// grids for the Qwen2-VL family, 1-D otherwise) and of the chunks' marker tokens. 0 on success.
int32_t native_mtmd_eval_chunks(mtmd_context * ctx, void * lctx, const mtmd_input_chunks * chunks, int32_t n_past, int32_t n_batch, int32_t * new_n_past);
int native_mtmd_vision(mtmd_context * ctx); // 1 when the projector has a vision encoder, 0 if not, -1 on error
int native_mtmd_mrope(mtmd_context * ctx);  // 1 when decoding uses M-RoPE positions, 0 if not, -1 on error
// native_model_mrope: 1 when the text model takes 4-component (M-RoPE / interleaved M-RoPE) positions.
int native_model_mrope(void * model);
void native_mtmd_quiet(void); // mtmd/clip/mtmd-helper logs: warnings and errors only, to stderr
// native_chat_template returns the model's tokenizer.chat_template (borrowed, valid until the model is
// freed), or NULL.
const char * native_chat_template(void * model);
// native_chat_apply formats an optional system turn and a user turn with llama_chat_apply_template
// and the generation prompt; it returns the formatted length (may exceed len: call again with a larger
// buffer) or a negative value when the template is not one llama.cpp's formatter knows.
int32_t native_chat_apply(const char * tmpl, const char * system, const char * user, char * buf, int32_t len);
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
