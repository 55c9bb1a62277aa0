# Build environment shared by the Makefile, CI and developers: source it before `go build/test`
# by hand so the cgo cache keys match the Makefile's (otherwise gocv and mtmd recompile, minutes).
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if grep -q -m1 avx2 /proc/cpuinfo 2>/dev/null; then _isa=x86-64-v3; else _isa=x86-64-v2; fi
export CGO_ENABLED=1
export CGO_CFLAGS="-O3 -march=${_isa}"
export CGO_CXXFLAGS="-O3 -march=${_isa}"
unset CGO_CPPFLAGS
export FRAMESWEEP_ORT_LIB="${_root}/third_party/onnxruntime/libonnxruntime.so.1"
export FRAMESWEEP_OCR_MODEL="${_root}/third_party/ocr-models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
# cgo compiles through scripts/cc-wrap (ccache when installed): a copy at one fixed path, so every checkout
# and worktree gives Go the same CC (its build cache keys include it) and the race, cgocheck2, -tags and
# fuzz builds of `make test` reuse the objects of the first build instead of recompiling gocv and mtmd.
_ccw="${XDG_CACHE_HOME:-$HOME/.cache}/framesweep/cc"
for _c in gcc g++; do
  if ! cmp -s "${_root}/scripts/cc-wrap" "$_ccw/$_c" 2>/dev/null; then
    mkdir -p "$_ccw" && cp "${_root}/scripts/cc-wrap" "$_ccw/$_c.$$" && chmod 755 "$_ccw/$_c.$$" && mv -f "$_ccw/$_c.$$" "$_ccw/$_c"
  fi
done
export CC="$_ccw/gcc" CXX="$_ccw/g++"
unset _isa _ccw _c
# The binaries find llama.cpp's libraries through a run path relative to the executable
# ($ORIGIN/../third_party/llama/lib: bin/framesweep). `go test` binaries run from a temporary directory,
# so they find them here: LD_LIBRARY_PATH, which the loader searches first (docs/runtimes.md "Build").
case ":${LD_LIBRARY_PATH:-}:" in
*":${_root}/third_party/llama/lib:"*) ;;
*) export LD_LIBRARY_PATH="${_root}/third_party/llama/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
esac
