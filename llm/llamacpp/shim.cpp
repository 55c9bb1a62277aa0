// C++ entry points of llm/llamacpp: thin wrappers over the mtmd C API with every exception caught.
#include "shim.h"

#include <stdio.h>
#include <string.h>

#include <mutex>
#include <string>

extern "C" {

void native_llama_free(void * ctx) {
	try {
		llama_free(static_cast<struct llama_context *>(ctx));
	} catch (...) {
	}
}

void native_llama_no_embeddings(void * ctx) {
	try {
		llama_set_embeddings(static_cast<struct llama_context *>(ctx), false);
	} catch (...) {
	}
}

mtmd_context * native_mtmd_init(const char * path, void * model, int n_threads, int min_tokens, int max_tokens) {
	try {
		struct mtmd_context_params p = mtmd_context_params_default();
		p.n_threads = n_threads;
		p.image_min_tokens = min_tokens; // <= 0: the projector's own limits
		p.image_max_tokens = max_tokens;
		p.use_gpu = false;
		p.print_timings = false;
		p.warmup = false;
		return mtmd_init_from_file(path, static_cast<const struct llama_model *>(model), p);
	} catch (...) {
		return nullptr;
	}
}

// native_mtmd_tokenize_rgb tokenizes one packed RGB24 image (mtmd_bitmap_init copies it). The marker
// text is tokenized without special tokens, so no BOS lands in mid-prompt.
mtmd_input_chunks * native_mtmd_tokenize_rgb(mtmd_context * ctx, uint32_t w, uint32_t h, const unsigned char * rgb, int32_t * status) {
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
		*status = mtmd_tokenize(ctx, chunks, &txt, bms, 1);
		mtmd_bitmap_free(bm);
		bm = nullptr; // the catch below must not free it again
		if (*status != 0) {
			mtmd_input_chunks_free(chunks);
			chunks = nullptr;
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

int32_t native_mtmd_eval_chunks(mtmd_context * ctx, void * lctx, const mtmd_input_chunks * chunks, int32_t n_past, int32_t n_batch, int32_t * new_n_past) {
	try {
		*new_n_past = n_past;
		return mtmd_helper_eval_chunks(ctx, static_cast<struct llama_context *>(lctx), chunks, n_past, 0, n_batch, false, new_n_past);
	} catch (...) {
		return -2;
	}
}

int native_mtmd_vision(mtmd_context * ctx) {
	try {
		return mtmd_support_vision(ctx) ? 1 : 0;
	} catch (...) {
		return -1;
	}
}

int native_mtmd_mrope(mtmd_context * ctx) {
	try {
		return mtmd_decode_use_mrope(ctx) ? 1 : 0;
	} catch (...) {
		return -1;
	}
}

int native_model_mrope(void * model) {
	try {
		int t = llama_model_rope_type(static_cast<const struct llama_model *>(model));
		return t == 8 || t == 40 ? 1 : 0; // LLAMA_ROPE_TYPE_MROPE, LLAMA_ROPE_TYPE_IMROPE
	} catch (...) {
		return -1;
	}
}

const char * native_chat_template(void * model) {
	try {
		return llama_model_chat_template(static_cast<const struct llama_model *>(model), nullptr);
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

// Levels of ggml_log_level: 1 debug, 2 info, 3 warn, 4 error, 5 continuation of the previous message.
static int last_level = 0;

static void quiet_log(int level, const char * text, void *) {
	if (level != 5) {
		last_level = level;
	}
	if (last_level >= 3 && text != nullptr) {
		fputs(text, stderr);
	}
}

void native_mtmd_quiet(void) {
	try {
		mtmd_helper_log_set(quiet_log, nullptr); // also calls mtmd_log_set
	} catch (...) {
	}
}

static std::mutex cap_mu;
static native_log_callback cap_next = nullptr;
static void * cap_next_data = nullptr;
static bool cap_on = false, cap_in_error = false;
static std::string cap_text;

static void capture_log(int level, const char * text, void *) {
	{
		std::lock_guard<std::mutex> lock(cap_mu);
		if (level != 5) {
			cap_in_error = false;
		}
		if (cap_on && text != nullptr && cap_text.size() < 1024) {
			try { // called from inside llama.cpp: an allocation failure must not unwind into it
				if (level == 4 && cap_text.empty()) {
					cap_text = text;
					cap_in_error = true;
				} else if (level == 5 && cap_in_error) {
					cap_text += text;
				}
			} catch (...) {
			}
		}
	}
	if (cap_next != nullptr) { // outside the lock: ollama's callback is Go code
		cap_next(level, text, cap_next_data);
	}
}

void native_log_capture_install(void) {
	try {
		native_log_callback next = nullptr;
		void * data = nullptr;
		llama_log_get(&next, &data);
		if (next == capture_log) {
			return;
		}
		{
			std::lock_guard<std::mutex> lock(cap_mu);
			cap_next = next;
			cap_next_data = data;
		}
		llama_log_set(capture_log, nullptr);
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
	size_t k = cap_text.size() < n - 1 ? cap_text.size() : n - 1;
	memcpy(buf, cap_text.data(), k);
	buf[k] = 0;
	cap_text.clear();
}

} // extern "C"
