#!/usr/bin/env bash
# bench/gpu/standins.sh OUT: stand-in libraries for the CUDA checks on a machine without a GPU (the Go
# tests of llm/llamacpp and cmd/framesweep, and `bench/gpu/run.sh --self-test`). Nothing here runs
# CUDA: each file only has the name, soname, dependencies and entry points of the real one, so the
# build choice, the preloading and the driver probe run through the real loader.
#
#   OUT/cuda/13/libggml-cuda.so   needs libcudart.so.13, libcublas.so.13, libcuda.so.1 (exports ggml_backend_init → NULL)
#   OUT/cuda/12/libggml-cuda.so   needs libcudart.so.12, libcublas.so.12, libcuda.so.1
#   OUT/host13/lib/               libcudart.so.13, libcublas.so.13 (needs libcublasLt.so.13), libcublasLt.so.13
#   OUT/host12/venv/lib/python3.11/site-packages/nvidia/{cuda_runtime,cublas}/lib/
#                                 the CUDA 12 runtime as NVIDIA's pip wheels lay it out
#   OUT/driver12/libcuda.so.1     cuDriverGetVersion → 12040 (CUDA 12.4), cuInit → 100 (no device)
#   OUT/driver13/libcuda.so.1     cuDriverGetVersion → 13000 (CUDA 13.0), cuInit → 100 (no device)
#
# A CUDA-13-only host: LD_LIBRARY_PATH=OUT/host13/lib:OUT/driver13. A CUDA-12-only host:
# FRAMESWEEP_CUDA_PYTHON=OUT/host12/venv LD_LIBRARY_PATH=OUT/driver12. Both with
# FRAMESWEEP_LLAMA_CUDA=OUT/cuda.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: bash bench/gpu/standins.sh OUT" >&2; exit 2; }
out="$1"
cc="${CC_STANDIN:-gcc}"
command -v "$cc" >/dev/null || { echo "standins.sh: no C compiler ($cc)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# lib DIR SONAME SOURCE [NEEDED...]: a shared library DIR/SONAME with that soname and those DT_NEEDED
# entries (stubs of them are made in a link-only folder, then dropped).
lib() {
	local dir="$1" soname="$2" src="$3"
	shift 3
	mkdir -p "$dir" "$tmp/link"
	printf '%s\n' "$src" >"$tmp/src.c"
	local needs=()
	for n in "$@"; do
		[[ -f "$tmp/link/$n" ]] || { printf 'int standin_%s(void) { return 0; }\n' "${n//[^a-zA-Z0-9]/_}" >"$tmp/stub.c" &&
			"$cc" -shared -fPIC -o "$tmp/link/$n" -Wl,-soname,"$n" "$tmp/stub.c"; }
		needs+=("-l:$n")
	done
	"$cc" -shared -fPIC -o "$dir/$soname" -Wl,-soname,"$soname" -Wl,-rpath,'$ORIGIN' "$tmp/src.c" -Wl,--no-as-needed -L"$tmp/link" "${needs[@]}"
}

for v in 13 12; do
	lib "$out/cuda/$v" libggml-cuda.so 'void * ggml_backend_init(void) { return 0; }' "libcudart.so.$v" "libcublas.so.$v" libcuda.so.1
done
lib "$out/host13/lib" libcublasLt.so.13 'int cublasLtCreate(void * h) { return 0; }'
lib "$out/host13/lib" libcudart.so.13 'int cudaRuntimeGetVersion(int * v) { *v = 13000; return 0; }'
cp "$out/host13/lib/libcublasLt.so.13" "$tmp/link/"
lib "$out/host13/lib" libcublas.so.13 'int cublasCreate_v2(void * h) { return 0; }' libcublasLt.so.13
site="$out/host12/venv/lib/python3.11/site-packages/nvidia"
lib "$site/cuda_runtime/lib" libcudart.so.12 'int cudaRuntimeGetVersion(int * v) { *v = 12040; return 0; }'
lib "$site/cublas/lib" libcublasLt.so.12 'int cublasLtCreate(void * h) { return 0; }'
cp "$site/cublas/lib/libcublasLt.so.12" "$tmp/link/"
lib "$site/cublas/lib" libcublas.so.12 'int cublasCreate_v2(void * h) { return 0; }' libcublasLt.so.12
driver='#include <stddef.h>
int cuDriverGetVersion(int * v) { *v = VERSION; return 0; }
int cuInit(unsigned int f) { return 100; }
int cuDeviceGetCount(int * n) { *n = 0; return 0; }
int cuDeviceGet(int * d, int i) { return 101; }
int cuDeviceGetName(char * s, int n, int d) { return 101; }
int cuDeviceTotalMem_v2(size_t * b, int d) { return 101; }'
lib "$out/driver12" libcuda.so.1 "${driver/VERSION/12040}"
lib "$out/driver13" libcuda.so.1 "${driver/VERSION/13000}"
