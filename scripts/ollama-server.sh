#!/usr/bin/env bash
# Builds the ollama server (github.com/ollama/ollama, the version go.mod pins as a tool) once per machine
# into ${XDG_CACHE_HOME:-~/.cache}/framesweep/ollama-VERSION/ollama and prints that path. Test support
# only: internal/testsupport/ollamatest serves the tiny test model with it for the real-server tests of llm/openai
# and sweep; it is never part of the binary or of `make demo`. Its llama.cpp (ollama's own copy) needs
# the nlohmann/stb headers (Debian's, from scripts/deps.sh) and miniaudio.h (from the malgo module).
# Concurrent callers wait on one lock, so parallel test packages build it once.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
ver=$(go list -m -f '{{.Version}}' github.com/ollama/ollama)
dir=${XDG_CACHE_HOME:-$HOME/.cache}/framesweep/ollama-$ver
bin=$dir/ollama
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [ ! -x "$bin" ]; then
  go mod download github.com/gen2brain/malgo@v0.11.24
  malgo=$(go mod download -json github.com/gen2brain/malgo@v0.11.24 | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  mkdir -p "$dir/include/miniaudio"
  cp "$malgo/miniaudio.h" "$dir/include/miniaudio.h"
  cp "$malgo/miniaudio.h" "$dir/include/miniaudio/miniaudio.h"
  chmod 644 "$dir/include/miniaudio.h" "$dir/include/miniaudio/miniaudio.h"
  start=$(date +%s)
  # -O1 instead of scripts/env.sh's -O3 for its C++ (llama.cpp, ggml's CPU ops: most of the ≈ 575 CPU-s
  # this build took): the server only serves the tiny random-weight test model, whose answers the tests
  # compare with themselves, never its speed; -O1 compiles about a third faster. ggml's C kernels keep
  # the -O3 their own #cgo CFLAGS give, after these.
  CGO_CFLAGS="${CGO_CFLAGS//-O3/-O1}" CGO_CXXFLAGS="${CGO_CXXFLAGS//-O3/-O1}" \
    CGO_CPPFLAGS="-I$dir/include -I/usr/include/stb" go build -o "$bin.tmp" github.com/ollama/ollama
  mv -f "$bin.tmp" "$bin"
  echo "ollama-server: built $bin in $(($(date +%s) - start)) s" >&2
fi
echo "$bin"
