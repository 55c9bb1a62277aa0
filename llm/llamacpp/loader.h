// C entry points of the loading side of llm/llamacpp (loader.cpp): aborts as one line, the CPU
// backend chosen among verified libraries, libraries preloaded by path, and the CUDA driver probed
// through its C API without the CUDA headers. Every function catches C++ exceptions.
#ifndef FRAMESWEEP_LLAMACPP_LOADER_H
#define FRAMESWEEP_LLAMACPP_LOADER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// native_abort_one_line makes ggml's aborts (GGML_ASSERT, GGML_ABORT, in llama.cpp, ggml and mtmd)
// write one line, "framesweep: llama.cpp aborted: FILE:LINE: MESSAGE", to stderr and end the process
// with exit_code: no backtrace, no debugger attached.
void native_abort_one_line(int exit_code);

// native_backend_score dlopens a ggml backend library and returns what its ggml_backend_score says
// for this CPU (0: it cannot run here), or -1 with dlopen's reason in err. The library is closed again.
int native_backend_score(const char * path, char * err, size_t n);
// native_backend_load registers the ggml backend library at path (ggml_backend_load); 0, or -1.
int native_backend_load(const char * path, char * err, size_t n);

// native_preload dlopens a library by path for the life of the process, its symbols global, so that a
// library loaded later that needs it by soname finds it loaded; 0, or -1 with dlopen's reason in err.
int native_preload(const char * path, char * err, size_t n);

// native_cuda_driver dlopens the CUDA driver library at path and writes cuDriverGetVersion's answer
// (1000 × major + 10 × minor) in version; it needs no GPU. 0, or -1 with the reason in err.
int native_cuda_driver(const char * path, int32_t * version, char * err, size_t n);
// native_cuda_devices initialises the driver (cuInit) and writes one "NAME\tBYTES" line per device
// into out (NUL-terminated); it returns the number of devices, or -1 with the reason in out.
int native_cuda_devices(const char * path, char * out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
