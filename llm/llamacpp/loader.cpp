// The loading side of llm/llamacpp (loader.h): ggml's abort hook, CPU backend scoring and loading,
// preloads, and the CUDA driver's C API reached through dlsym.
#include "loader.h"

#include "ggml-backend.h"
#include "ggml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <string>

static int abort_exit_code = 1;

static void write_all(const char * s, size_t n) {
	while (n > 0) {
		ssize_t k = write(2, s, n);
		if (k <= 0) {
			return;
		}
		s += k;
		n -= (size_t) k;
	}
}

// one_line: called by ggml_abort with "FILE:LINE: MESSAGE"; the path up to the source tree is
// dropped and newlines become spaces. It does not return.
static void one_line(const char * msg) {
	char line[1024];
	const char * m = msg != nullptr ? msg : "(no message)";
	// The build host's path up to the source tree: upstream's build (…/llama.cpp/src/…) and ours of
	// mtmd (…/third_party/llama/src/tools/mtmd/…).
	for (const char * tree : {"/llama.cpp/", "third_party/llama/src/"}) {
		const char * at = strstr(m, tree);
		if (at != nullptr) {
			m = at + strlen(tree);
			break;
		}
	}
	int k = snprintf(line, sizeof line - 1, "framesweep: llama.cpp aborted: %s", m);
	if (k < 0) {
		k = 0;
	}
	size_t len = (size_t) k < sizeof line - 1 ? (size_t) k : sizeof line - 2;
	for (size_t i = 0; i < len; i++) {
		if (line[i] == '\n' || line[i] == '\r') {
			line[i] = ' ';
		}
	}
	while (len > 0 && line[len - 1] == ' ') {
		len--;
	}
	line[len++] = '\n';
	write_all(line, len);
	_exit(abort_exit_code);
}

extern "C" {

void native_abort_one_line(int exit_code) {
	abort_exit_code = exit_code;
	ggml_set_abort_callback(one_line);
}

static void put_err(char * buf, size_t n, const std::string & s) {
	if (n == 0) {
		return;
	}
	size_t k = s.size() < n - 1 ? s.size() : n - 1;
	memcpy(buf, s.data(), k);
	buf[k] = 0;
}

static std::string dl_error(const char * fallback) {
	const char * e = dlerror();
	return e != nullptr ? e : fallback;
}

int native_backend_score(const char * path, char * err, size_t n) {
	try {
		void * h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (h == nullptr) {
			put_err(err, n, dl_error("dlopen failed"));
			return -1;
		}
		typedef int (*score_fn)(void);
		auto score = reinterpret_cast<score_fn>(dlsym(h, "ggml_backend_score"));
		int s = score != nullptr ? score() : -1;
		if (score == nullptr) {
			put_err(err, n, "no ggml_backend_score in it");
		}
		dlclose(h);
		return s;
	} catch (...) {
		put_err(err, n, "exception while scoring");
		return -1;
	}
}

int native_backend_load(const char * path, char * err, size_t n) {
	try {
		if (ggml_backend_load(path) == nullptr) {
			put_err(err, n, "ggml could not register it as a backend");
			return -1;
		}
		return 0;
	} catch (...) {
		put_err(err, n, "exception while loading it");
		return -1;
	}
}

int native_preload(const char * path, char * err, size_t n) {
	try {
		if (dlopen(path, RTLD_NOW | RTLD_GLOBAL) == nullptr) { // kept: the process needs it from now on
			put_err(err, n, dl_error("dlopen failed"));
			return -1;
		}
		return 0;
	} catch (...) {
		put_err(err, n, "exception while loading it");
		return -1;
	}
}

// The few CUDA driver API entry points used, declared here (CUresult is an int; CUdevice an int).
typedef int (*cu_int_fn)(int *);
typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_dev_get_fn)(int *, int);
typedef int (*cu_dev_name_fn)(char *, int, int);
typedef int (*cu_dev_mem_fn)(size_t *, int);

static void * open_driver(const char * path, std::string & why) {
	void * h = dlopen(path, RTLD_NOW | RTLD_LOCAL); // never closed: unloading a driver is not safe
	if (h == nullptr) {
		why = dl_error("dlopen failed");
	}
	return h;
}

int native_cuda_driver(const char * path, int32_t * version, char * err, size_t n) {
	try {
		std::string why;
		void * h = open_driver(path, why);
		if (h == nullptr) {
			put_err(err, n, why);
			return -1;
		}
		auto get = reinterpret_cast<cu_int_fn>(dlsym(h, "cuDriverGetVersion"));
		int v = 0;
		if (get == nullptr) {
			put_err(err, n, "no cuDriverGetVersion in it");
			return -1;
		}
		int rc = get(&v);
		if (rc != 0) {
			put_err(err, n, "cuDriverGetVersion: CUresult " + std::to_string(rc));
			return -1;
		}
		*version = v;
		return 0;
	} catch (...) {
		put_err(err, n, "exception while probing the driver");
		return -1;
	}
}

int native_cuda_devices(const char * path, char * out, size_t n) {
	try {
		std::string why;
		void * h = open_driver(path, why);
		if (h == nullptr) {
			put_err(out, n, why);
			return -1;
		}
		auto init = reinterpret_cast<cu_init_fn>(dlsym(h, "cuInit"));
		auto count = reinterpret_cast<cu_int_fn>(dlsym(h, "cuDeviceGetCount"));
		auto get = reinterpret_cast<cu_dev_get_fn>(dlsym(h, "cuDeviceGet"));
		auto name = reinterpret_cast<cu_dev_name_fn>(dlsym(h, "cuDeviceGetName"));
		auto mem = reinterpret_cast<cu_dev_mem_fn>(dlsym(h, "cuDeviceTotalMem_v2"));
		if (init == nullptr || count == nullptr || get == nullptr || name == nullptr || mem == nullptr) {
			put_err(out, n, "the driver library lacks cuInit, cuDeviceGetCount, cuDeviceGet, cuDeviceGetName or cuDeviceTotalMem_v2");
			return -1;
		}
		int rc = init(0);
		if (rc != 0) {
			put_err(out, n, "cuInit: CUresult " + std::to_string(rc) + (rc == 100 ? " (CUDA_ERROR_NO_DEVICE)" : ""));
			return -1;
		}
		int k = 0;
		if ((rc = count(&k)) != 0) {
			put_err(out, n, "cuDeviceGetCount: CUresult " + std::to_string(rc));
			return -1;
		}
		std::string lines;
		for (int i = 0; i < k; i++) {
			int dev = 0;
			char nm[256] = {0};
			size_t bytes = 0;
			if (get(&dev, i) != 0 || name(nm, (int) sizeof nm - 1, dev) != 0 || mem(&bytes, dev) != 0) {
				lines += "(unreadable)\t0\n";
				continue;
			}
			lines += std::string(nm) + "\t" + std::to_string(bytes) + "\n";
		}
		put_err(out, n, lines);
		return k;
	} catch (...) {
		put_err(out, n, "exception while listing the devices");
		return -1;
	}
}

} // extern "C"
