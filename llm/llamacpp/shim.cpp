// C++ entry points of llm/llamacpp (declared in shim.h): thin wrappers over the llama.cpp, mtmd and
// clip APIs of the pinned llama.cpp (package internal/mtmd carries its headers and compiles mtmd),
// every exception caught.
#include "shim.h"

#include "clip-impl.h" // clip_image_u8 / clip_image_f32 (temporal pairs, patches/0001)
#include "clip.h"
#include "llama.h"
#include "mtmd.h"

#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

// Levels of ggml_log_level: 1 debug, 2 info, 3 warn, 4 error, 5 continuation of the previous message.
static int last_level = 0;

static void quiet_log(enum ggml_log_level level, const char * text, void *) {
	if (level != GGML_LOG_LEVEL_CONT) {
		last_level = level;
	}
	if (last_level >= GGML_LOG_LEVEL_WARN && text != nullptr) {
		fputs(text, stderr);
	}
}

// The load-error capture: the first error message logged between begin and end.
static std::mutex cap_mu;
static bool cap_on = false, cap_in_error = false;
static std::string cap_text;

static void capture_log(enum ggml_log_level level, const char * text, void * data) {
	{
		std::lock_guard<std::mutex> lock(cap_mu);
		if (level != GGML_LOG_LEVEL_CONT) {
			cap_in_error = false;
		}
		if (cap_on && text != nullptr && cap_text.size() < 1024) {
			try { // called from inside llama.cpp: an allocation failure must not unwind into it
				if (level == GGML_LOG_LEVEL_ERROR && cap_text.empty()) {
					cap_text = text;
					cap_in_error = true;
				} else if (level == GGML_LOG_LEVEL_CONT && cap_in_error) {
					cap_text += text;
				}
			} catch (...) {
			}
		}
	}
	quiet_log(level, text, data);
}

// A progress callback of our own: without one llama.cpp prints a row of dots on stderr.
static bool no_progress(float, void *) { return true; }

extern "C" {

void native_backend_init(void) {
	try {
		llama_backend_init();
		llama_log_set(capture_log, nullptr);
		mtmd_log_set(quiet_log, nullptr); // the projector logs every image at info level otherwise
	} catch (...) {
	}
}

void native_log_capture_begin(void) {
	std::lock_guard<std::mutex> lock(cap_mu);
	cap_text.clear();
	cap_in_error = false;
	cap_on = true;
}

void native_log_capture_end(char * buf, size_t n) {
	std::lock_guard<std::mutex> lock(cap_mu);
	cap_on = false;
	if (n == 0) {
		return;
	}
	size_t k = std::min(cap_text.size(), n - 1);
	memcpy(buf, cap_text.data(), k);
	buf[k] = 0;
	cap_text.clear();
}

void * native_model_load(const char * path) {
	try {
		struct llama_model_params p = llama_model_default_params();
		p.use_mmap = true;
		p.progress_callback = no_progress;
		return llama_model_load_from_file(path, p);
	} catch (...) {
		return nullptr;
	}
}

void native_model_free(void * model) {
	try {
		llama_model_free(static_cast<llama_model *>(model));
	} catch (...) {
	}
}

int native_model_mrope(void * model) {
	try {
		enum llama_rope_type t = llama_model_rope_type(static_cast<const llama_model *>(model));
		return t == LLAMA_ROPE_TYPE_MROPE || t == LLAMA_ROPE_TYPE_IMROPE ? 1 : 0;
	} catch (...) {
		return -1;
	}
}

static const llama_vocab * vocab_of(void * model) {
	return llama_model_get_vocab(static_cast<const llama_model *>(model));
}

int32_t native_vocab_n(void * model) {
	try {
		return llama_vocab_n_tokens(vocab_of(model));
	} catch (...) {
		return 0;
	}
}

int native_token_is_eog(void * model, int32_t token) {
	try {
		return llama_vocab_is_eog(vocab_of(model), token) ? 1 : 0;
	} catch (...) {
		return 0;
	}
}

int32_t native_tokenize(void * model, const char * text, int32_t len, bool add_special, bool parse_special, int32_t * out, int32_t cap) {
	try {
		return llama_tokenize(vocab_of(model), text, len, out, cap, add_special, parse_special);
	} catch (...) {
		return INT32_MIN;
	}
}

int32_t native_token_piece(void * model, int32_t token, char * buf, int32_t cap) {
	try {
		return llama_token_to_piece(vocab_of(model), token, buf, cap, 0, true);
	} catch (...) {
		return 0;
	}
}

int32_t native_embd_inp(void * model) {
	try {
		return llama_model_n_embd_inp(static_cast<const llama_model *>(model));
	} catch (...) {
		return 0;
	}
}

void * native_context_new(void * model, int32_t n_ctx, int32_t n_batch, int32_t threads) {
	try {
		struct llama_context_params p = llama_context_default_params();
		p.n_ctx = n_ctx;
		p.n_batch = n_batch;
		p.n_ubatch = n_batch;
		p.n_seq_max = 1;
		p.n_threads = threads;
		p.n_threads_batch = threads;
		p.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
		p.embeddings = false;
		return llama_init_from_model(static_cast<llama_model *>(model), p);
	} catch (...) {
		return nullptr;
	}
}

void native_context_free(void * lctx) {
	try {
		llama_free(static_cast<llama_context *>(lctx));
	} catch (...) {
	}
}

void native_kv_clear(void * lctx) {
	try {
		llama_memory_clear(llama_get_memory(static_cast<llama_context *>(lctx)), true);
	} catch (...) {
	}
}

// A token batch and its capacity.
struct native_batch {
	llama_batch b;
	int32_t cap;
};

void * native_batch_new(int32_t n) {
	native_batch * nb = nullptr;
	try {
		nb = new native_batch{llama_batch_init(n, 0, 1), n};
		if (nb->b.token == nullptr || nb->b.pos == nullptr || nb->b.seq_id == nullptr || nb->b.logits == nullptr) {
			llama_batch_free(nb->b);
			delete nb;
			return nullptr;
		}
		return nb;
	} catch (...) {
		delete nb;
		return nullptr;
	}
}

void native_batch_free(void * batch) {
	try {
		auto * nb = static_cast<native_batch *>(batch);
		if (nb != nullptr) {
			llama_batch_free(nb->b);
			delete nb;
		}
	} catch (...) {
	}
}

int32_t native_decode_tokens(void * lctx, void * batch, const int32_t * tokens, int32_t n, int32_t pos0, bool logits_last) {
	try {
		auto * nb = static_cast<native_batch *>(batch);
		llama_batch & b = nb->b;
		for (int32_t i = 0; i < n;) {
			b.n_tokens = 0;
			for (; i < n && b.n_tokens < nb->cap; i++) {
				int32_t k = b.n_tokens++;
				b.token[k] = tokens[i];
				b.pos[k] = pos0 + i;
				b.n_seq_id[k] = 1;
				b.seq_id[k][0] = 0;
				b.logits[k] = logits_last && i == n - 1;
			}
			int32_t rc = llama_decode(static_cast<llama_context *>(lctx), b);
			if (rc != 0) {
				return rc;
			}
		}
		return 0;
	} catch (...) {
		return -100;
	}
}

int32_t native_decode_embd(void * lctx, const float * embd, int32_t n, const int32_t * pos, int32_t n_pos_per_embd, int32_t n_batch, bool non_causal) {
	auto * ctx = static_cast<llama_context *>(lctx);
	try {
		const int32_t n_embd = llama_model_n_embd_inp(llama_get_model(ctx));
		std::vector<llama_pos> pos_view;
		std::vector<int32_t> n_seq_id;
		std::vector<llama_seq_id> seq_0(1, 0);
		std::vector<llama_seq_id *> seq_ids;
		std::vector<int8_t> logits;
		if (non_causal) {
			llama_set_causal_attn(ctx, false);
		}
		int32_t rc = 0;
		for (int32_t off = 0; off < n && rc == 0; off += n_batch) {
			const int32_t k = std::min(n_batch, n - off);
			// The batch's positions are dimension-major over its own k tokens.
			pos_view.assign((size_t) k * n_pos_per_embd, 0);
			for (int32_t d = 0; d < n_pos_per_embd; d++) {
				std::copy(pos + (size_t) d * n + off, pos + (size_t) d * n + off + k, pos_view.begin() + (size_t) d * k);
			}
			n_seq_id.assign(k, 1);
			seq_ids.assign(k + 1, seq_0.data());
			seq_ids[k] = nullptr;
			logits.assign(k, 0);
			llama_batch b = {
				/*n_tokens =*/k,
				/*token    =*/nullptr,
				/*embd     =*/const_cast<float *>(embd + (size_t) off * n_embd),
				/*pos      =*/pos_view.data(),
				/*n_seq_id =*/n_seq_id.data(),
				/*seq_id   =*/seq_ids.data(),
				/*logits   =*/logits.data(),
			};
			rc = llama_decode(ctx, b);
		}
		if (non_causal) {
			llama_set_causal_attn(ctx, true);
		}
		return rc;
	} catch (...) {
		try {
			llama_set_causal_attn(ctx, true);
		} catch (...) {
		}
		return -100;
	}
}

const float * native_logits_last(void * lctx) {
	try {
		return llama_get_logits_ith(static_cast<llama_context *>(lctx), -1);
	} catch (...) {
		return nullptr;
	}
}

const char * native_chat_template(void * model) {
	try {
		return llama_model_chat_template(static_cast<const llama_model *>(model), nullptr);
	} catch (...) {
		return nullptr;
	}
}

int32_t native_chat_apply(const char * tmpl, const char * system, const char * user, char * buf, int32_t len) {
	try {
		struct llama_chat_message msgs[2];
		size_t n = 0;
		if (system != nullptr) {
			msgs[n++] = {"system", system};
		}
		msgs[n++] = {"user", user};
		return llama_chat_apply_template(tmpl, msgs, n, true, buf, len);
	} catch (...) {
		return -2;
	}
}

void * native_mtmd_init(const char * path, void * model, int n_threads, int min_tokens, int max_tokens) {
	try {
		struct mtmd_context_params p = mtmd_context_params_default();
		p.n_threads = n_threads;
		p.image_min_tokens = min_tokens; // <= 0: the projector's own limits
		p.image_max_tokens = max_tokens;
		p.use_gpu = false;
		p.print_timings = false;
		p.warmup = false;
		return mtmd_init_from_file(path, static_cast<const llama_model *>(model), p);
	} catch (...) {
		return nullptr;
	}
}

void native_mtmd_free(void * mtmd) {
	try {
		mtmd_free(static_cast<mtmd_context *>(mtmd));
	} catch (...) {
	}
}

int native_mtmd_vision(void * mtmd) {
	try {
		return mtmd_support_vision(static_cast<mtmd_context *>(mtmd)) ? 1 : 0;
	} catch (...) {
		return -1;
	}
}

int native_mtmd_mrope(void * mtmd) {
	try {
		return mtmd_decode_use_mrope(static_cast<mtmd_context *>(mtmd)) ? 1 : 0;
	} catch (...) {
		return -1;
	}
}

int native_mtmd_non_causal(void * mtmd) {
	try {
		return mtmd_decode_use_non_causal(static_cast<mtmd_context *>(mtmd)) ? 1 : 0;
	} catch (...) {
		return -1;
	}
}

// The marker text is tokenized without special tokens, so no BOS lands in mid-prompt.
void * native_mtmd_tokenize_rgb(void * mtmd, uint32_t w, uint32_t h, const unsigned char * rgb, int32_t * status) {
	mtmd_bitmap * bm = nullptr;
	mtmd_input_chunks * chunks = nullptr;
	try {
		bm = mtmd_bitmap_init(w, h, rgb);
		if (bm == nullptr) {
			*status = -1;
			return nullptr;
		}
		chunks = mtmd_input_chunks_init();
		struct mtmd_input_text txt = {mtmd_default_marker(), false, true};
		const mtmd_bitmap * bms[1] = {bm};
		*status = mtmd_tokenize(static_cast<mtmd_context *>(mtmd), chunks, &txt, bms, 1);
		mtmd_bitmap_free(bm);
		bm = nullptr; // the catch below must not free it again
		if (*status != 0) {
			mtmd_input_chunks_free(chunks);
			return nullptr;
		}
		return chunks;
	} catch (...) {
		if (bm != nullptr) {
			mtmd_bitmap_free(bm);
		}
		if (chunks != nullptr) {
			mtmd_input_chunks_free(chunks);
		}
		*status = -2;
		return nullptr;
	}
}

void native_chunks_free(void * chunks) {
	try {
		mtmd_input_chunks_free(static_cast<mtmd_input_chunks *>(chunks));
	} catch (...) {
	}
}

int32_t native_chunks_n(void * chunks) {
	try {
		return (int32_t) mtmd_input_chunks_size(static_cast<mtmd_input_chunks *>(chunks));
	} catch (...) {
		return 0;
	}
}

int native_chunk_info(void * chunks, int32_t i, int32_t * type, int32_t * n_tokens, int32_t * nx, int32_t * ny, int32_t * n_pos) {
	try {
		const mtmd_input_chunk * c = mtmd_input_chunks_get(static_cast<mtmd_input_chunks *>(chunks), i);
		if (c == nullptr) {
			return -1;
		}
		*type = (int32_t) mtmd_input_chunk_get_type(c);
		*n_tokens = (int32_t) mtmd_input_chunk_get_n_tokens(c);
		*n_pos = (int32_t) mtmd_input_chunk_get_n_pos(c);
		*nx = *n_tokens;
		*ny = 1;
		if (const mtmd_image_tokens * it = mtmd_input_chunk_get_tokens_image(c)) {
			*nx = (int32_t) mtmd_image_tokens_get_nx(it);
			*ny = (int32_t) mtmd_image_tokens_get_ny(it);
		}
		return 0;
	} catch (...) {
		return -2;
	}
}

const int32_t * native_chunk_text(void * chunks, int32_t i, int32_t * n) {
	try {
		size_t k = 0;
		const llama_token * t = mtmd_input_chunk_get_tokens_text(mtmd_input_chunks_get(static_cast<mtmd_input_chunks *>(chunks), i), &k);
		*n = (int32_t) k;
		return t;
	} catch (...) {
		*n = 0;
		return nullptr;
	}
}

const float * native_chunk_encode(void * mtmd, void * chunks, int32_t i) {
	try {
		auto * m = static_cast<mtmd_context *>(mtmd);
		if (mtmd_encode_chunk(m, mtmd_input_chunks_get(static_cast<mtmd_input_chunks *>(chunks), i)) != 0) {
			return nullptr;
		}
		return mtmd_get_output_embd(m);
	} catch (...) {
		return nullptr;
	}
}

// A temporal pair: both frames preprocessed as images, in one clip image (frame a, then frame b),
// and the embeddings once encoded.
struct native_pair {
	clip_image_f32_batch batch;
	std::vector<float> embd;
	int32_t n_tokens = 0;
};

// preprocess resizes and normalises one frame as the projector does for an image.
static bool preprocess(clip_ctx * cv, uint32_t w, uint32_t h, const unsigned char * rgb, clip_image_f32_batch & out) {
	clip_image_u8_ptr u8(clip_image_u8_init());
	clip_build_img_from_pixels(rgb, (int) w, (int) h, u8.get());
	return clip_image_preprocess(cv, u8.get(), &out) && out.entries.size() == 1;
}

void * native_pair_new(void * mtmd, uint32_t w, uint32_t h, const unsigned char * a, const unsigned char * b, int32_t * n_tokens, int32_t * nx, int32_t * ny, int32_t * status) {
	native_pair * p = nullptr;
	try {
		clip_ctx * cv = mtmd_get_clip_ctx_v(static_cast<mtmd_context *>(mtmd));
		if (cv == nullptr || !clip_is_mrope(cv)) {
			*status = -3; // no Qwen2-VL-family vision encoder
			return nullptr;
		}
		clip_image_f32_batch fa, fb;
		if (!preprocess(cv, w, h, a, fa) || !preprocess(cv, w, h, b, fb)) {
			*status = -1;
			return nullptr;
		}
		clip_image_f32 & ia = *fa.entries[0];
		const clip_image_f32 & ib = *fb.entries[0];
		if (ia.nx != ib.nx || ia.ny != ib.ny) {
			*status = -4;
			return nullptr;
		}
		ia.buf.insert(ia.buf.end(), ib.buf.begin(), ib.buf.end()); // frame a, then frame b
		p = new native_pair();
		p->batch.entries.push_back(std::move(fa.entries[0]));
		clip_image_f32 * img = p->batch.entries[0].get();
		p->n_tokens = clip_n_output_tokens(cv, img);
		*n_tokens = p->n_tokens;
		*nx = clip_n_output_tokens_x(cv, img);
		*ny = clip_n_output_tokens_y(cv, img);
		*status = 0;
		return p;
	} catch (...) {
		delete p;
		*status = -2;
		return nullptr;
	}
}

const float * native_pair_encode(void * mtmd, void * pair, int n_threads) {
	try {
		auto * p = static_cast<native_pair *>(pair);
		clip_ctx * cv = mtmd_get_clip_ctx_v(static_cast<mtmd_context *>(mtmd));
		p->embd.assign((size_t) p->n_tokens * clip_n_mmproj_embd(cv), 0.0f);
		if (!clip_image_batch_encode(cv, n_threads, &p->batch, p->embd.data())) {
			return nullptr;
		}
		return p->embd.data();
	} catch (...) {
		return nullptr;
	}
}

void native_pair_free(void * pair) {
	try {
		delete static_cast<native_pair *>(pair);
	} catch (...) {
	}
}

} // extern "C"
