// C++ entry points of llm/llamacpp (declared in shim.h): thin wrappers over the llama.cpp, ggml and
// mtmd APIs of the pinned release (prebuilt libllama/libggml, mtmd compiled by package
// internal/mtmd), every exception caught.
#include "shim.h"

#include "ggml-backend.h"
#include "llama.h"
#include "mtmd.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

// Levels of ggml_log_level: 1 debug, 2 info, 3 warn, 4 error, 5 continuation of the previous message.
// Messages at or above log_min reach stderr, prefixed "llama.cpp: " so they are not mistaken for ours;
// the default (errors) keeps llama.cpp's advice about its own command-line flags off a framesweep run.
static int last_level = 0;
static int log_min = GGML_LOG_LEVEL_ERROR;
static bool line_start = true;

static void quiet_log(enum ggml_log_level level, const char * text, void *) {
	if (level != GGML_LOG_LEVEL_CONT) {
		last_level = level;
	}
	if (last_level >= log_min && text != nullptr) {
		if (line_start) {
			fputs("llama.cpp: ", stderr);
		}
		fputs(text, stderr);
		size_t k = strlen(text);
		line_start = k > 0 && text[k - 1] == '\n';
	}
}

// The load-error capture: the first error message logged between begin and end.
static std::mutex cap_mu;
static bool cap_on = false, cap_in_error = false;
static std::string cap_text;

// While a load is captured its errors are not printed: the Go error reports the first one.
static void capture_log(enum ggml_log_level level, const char * text, void * data) {
	bool captured = false;
	{
		std::lock_guard<std::mutex> lock(cap_mu);
		captured = cap_on && (level == GGML_LOG_LEVEL_ERROR || (level == GGML_LOG_LEVEL_CONT && last_level == GGML_LOG_LEVEL_ERROR));
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
	if (captured) {
		if (level != GGML_LOG_LEVEL_CONT) {
			last_level = level;
		}
		return;
	}
	quiet_log(level, text, data);
}

// A progress callback of our own: without one llama.cpp prints a row of dots on stderr.
static bool no_progress(float, void *) { return true; }

static void put(char * buf, size_t n, const std::string & s) {
	if (n == 0) {
		return;
	}
	size_t k = std::min(s.size(), n - 1);
	memcpy(buf, s.data(), k);
	buf[k] = 0;
}

// lib_dir: the directory of the libllama this process runs (its ggml backends lie beside it).
static std::string lib_dir() {
	Dl_info info;
	if (dladdr(reinterpret_cast<void *>(&llama_backend_init), &info) == 0 || info.dli_fname == nullptr) {
		return "";
	}
	std::string p = info.dli_fname;
	size_t slash = p.rfind('/');
	return slash == std::string::npos ? "." : p.substr(0, slash);
}

// loaded_variant: the file name of the loaded library whose name starts with prefix ("" if none).
struct variant_search {
	const char * prefix;
	std::string found;
};

static int find_loaded(struct dl_phdr_info * info, size_t, void * data) {
	auto * vs = static_cast<variant_search *>(data);
	if (info->dlpi_name == nullptr) {
		return 0;
	}
	const char * base = strrchr(info->dlpi_name, '/');
	base = base == nullptr ? info->dlpi_name : base + 1;
	if (strncmp(base, vs->prefix, strlen(vs->prefix)) == 0) {
		vs->found = base;
		return 1;
	}
	return 0;
}

static std::string loaded_variant(const char * prefix) {
	variant_search vs{prefix, ""};
	dl_iterate_phdr(find_loaded, &vs);
	return vs.found;
}

extern "C" {

int native_lib_dir(char * buf, size_t n) {
	try {
		std::string d = lib_dir();
		put(buf, n, d);
		return d.empty() ? -1 : 0;
	} catch (...) {
		return -2;
	}
}

int native_backend_init(int log_level, const char * cpu_lib, char * err, size_t n) {
	try {
		log_min = log_level;
		ggml_log_set(quiet_log, nullptr);
		llama_log_set(capture_log, nullptr);
		mtmd_log_set(quiet_log, nullptr); // the projector logs every image at info level otherwise
		// The prebuilt libggml loads its CPU backend at run time, one library per CPU level; Go chose
		// cpu_lib among the checked ones (backend.go; ggml's own loader would dlopen every file beside
		// libllama unchecked). GPU backends are loaded only when asked for (native_gpu_load), so a CPU
		// run never initialises CUDA.
		if (ggml_backend_load(cpu_lib) == nullptr || ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU) == nullptr) {
			put(err, n, std::string("ggml could not register the CPU backend ") + cpu_lib);
			return -1;
		}
		llama_backend_init();
		return 0;
	} catch (...) {
		put(err, n, "exception while loading the ggml backends");
		return -2;
	}
}

int32_t native_backends(char * buf, int32_t n) {
	try {
		std::string out;
		for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
			ggml_backend_dev_t d = ggml_backend_dev_get(i);
			std::string detail = ggml_backend_dev_description(d);
			if (ggml_backend_dev_type(d) == GGML_BACKEND_DEVICE_TYPE_CPU) {
				std::string v = loaded_variant("libggml-cpu-");
				detail = v.empty() ? detail : v;
			}
			out += std::string(ggml_backend_dev_name(d)) + "\t" + detail + "\n";
		}
		if ((int32_t) out.size() < n) {
			memcpy(buf, out.data(), out.size());
			buf[out.size()] = 0;
		}
		return (int32_t) out.size();
	} catch (...) {
		return -1;
	}
}

static std::mutex gpu_mu;
static bool gpu_loaded = false;

int native_gpu_load(const char * path, char * err, size_t n) {
	std::lock_guard<std::mutex> lock(gpu_mu);
	try {
		if (!gpu_loaded) {
			// dlopen first: its error names the library that is missing (libcudart.so.13, libcuda.so.1…),
			// which ggml's loader only logs. The handle is dropped once ggml holds its own.
			void * h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
			if (h == nullptr) {
				const char * e = dlerror();
				put(err, n, e != nullptr ? e : "dlopen failed");
				return -1;
			}
			ggml_backend_reg_t reg = ggml_backend_load(path);
			dlclose(h);
			if (reg == nullptr) {
				put(err, n, std::string(path) + ": ggml could not register it as a backend");
				return -1;
			}
			gpu_loaded = true;
		}
		int k = 0;
		for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
			if (ggml_backend_dev_type(ggml_backend_dev_get(i)) == GGML_BACKEND_DEVICE_TYPE_GPU) {
				k++;
			}
		}
		return k;
	} catch (...) {
		put(err, n, "exception while loading the GPU backend");
		return -1;
	}
}

void * native_gpu_device(int i, char * desc, size_t n) {
	try {
		int k = 0;
		for (size_t j = 0; j < ggml_backend_dev_count(); j++) {
			ggml_backend_dev_t d = ggml_backend_dev_get(j);
			if (ggml_backend_dev_type(d) != GGML_BACKEND_DEVICE_TYPE_GPU) {
				continue;
			}
			if (k++ == i) {
				put(desc, n, std::string(ggml_backend_dev_name(d)) + " (" + ggml_backend_dev_description(d) + ")");
				return d;
			}
		}
		return nullptr;
	} catch (...) {
		return nullptr;
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

void * native_model_load(const char * path, void * gpu, int32_t gpu_layers) {
	try {
		struct llama_model_params p = llama_model_default_params();
		p.load_mode = LLAMA_LOAD_MODE_MMAP;
		p.progress_callback = no_progress;
		// Only the device asked for: with none, the CPU alone (no layer is offloaded).
		ggml_backend_dev_t devs[2] = {static_cast<ggml_backend_dev_t>(gpu), nullptr};
		p.devices = devs;
		p.n_gpu_layers = gpu == nullptr ? 0 : gpu_layers;
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

void * native_mtmd_init(const char * path, void * model, int n_threads, int min_tokens, int max_tokens, void * gpu) {
	try {
		struct mtmd_context_params p = mtmd_context_params_default();
		p.n_threads = n_threads;
		p.image_min_tokens = min_tokens; // <= 0: the projector's own limits
		p.image_max_tokens = max_tokens;
		p.use_gpu = gpu != nullptr;
		p.device = static_cast<ggml_backend_dev_t>(gpu);
		// ggml's CPU flash attention makes the vision encoder about 1.8x slower here (BenchmarkAsk,
		// docs/runtimes.md "Build"); on a GPU upstream's automatic choice stands.
		p.flash_attn_type = gpu != nullptr ? LLAMA_FLASH_ATTN_TYPE_AUTO : LLAMA_FLASH_ATTN_TYPE_DISABLED;
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
		return mtmd_decode_use_non_causal(static_cast<mtmd_context *>(mtmd), nullptr) ? 1 : 0; // nullptr: an image chunk
	} catch (...) {
		return -1;
	}
}

// The marker text is tokenized without special tokens, so no BOS lands in mid-prompt.
void * native_mtmd_tokenize_rgb(void * mtmd, uint32_t w, uint32_t h, const unsigned char * rgb, const unsigned char * b, int32_t * status) {
	mtmd_bitmap * bms[2] = {nullptr, nullptr};
	mtmd_input_chunks * chunks = nullptr;
	const int n = b == nullptr ? 1 : 2;
	try {
		for (int k = 0; k < n; k++) {
			bms[k] = mtmd_bitmap_init(w, h, k == 0 ? rgb : b);
			if (bms[k] == nullptr) {
				throw 1;
			}
			mtmd_bitmap_set_mergeable(bms[k], n == 2);
		}
		chunks = mtmd_input_chunks_init();
		std::string marker = mtmd_default_marker();
		std::string text = n == 2 ? marker + marker : marker;
		struct mtmd_input_text txt = {text.c_str(), text.size(), false, true};
		const mtmd_bitmap * cb[2] = {bms[0], bms[1]};
		*status = mtmd_tokenize(static_cast<mtmd_context *>(mtmd), chunks, &txt, cb, n);
		for (auto & bm : bms) {
			mtmd_bitmap_free(bm); // nullptr is fine
			bm = nullptr;         // the catch below must not free it again
		}
		if (*status != 0) {
			mtmd_input_chunks_free(chunks);
			return nullptr;
		}
		return chunks;
	} catch (...) {
		for (auto & bm : bms) {
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
		const mtmd_image_tokens * it = mtmd_input_chunk_get_tokens_image(c);
		if (it != nullptr && *n_tokens > 0) {
			// Under M-RoPE the last token sits at (t, x, y) = (0, nx-1, ny-1) of its grid; 1-D
			// positions run on (t = n-1).
			mtmd_decoder_pos last = mtmd_image_tokens_get_decoder_pos(it, 0, (size_t) *n_tokens - 1);
			if (last.t == 0 && *n_tokens > 1) {
				*nx = (int32_t) last.x + 1;
				*ny = (int32_t) last.y + 1;
			}
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

} // extern "C"
