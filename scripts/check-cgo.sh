#!/usr/bin/env bash
# STYLE.md A1: our own `import "C"` lives only in native/ and llm/<engine>/; pure-Go packages build with CGO_ENABLED=0
# (the record core among them: record/ runs/ items/, ingest/ and audit/, so merge, import and audit run anywhere).
set -euo pipefail
cd "$(dirname "$0")/.."
bad=$(git ls-files '*.go' | grep -vE '^(native|llm/[^/]+)/' | xargs grep -l '^import "C"' 2>/dev/null || true)
if [ -n "$bad" ]; then echo "check-cgo: import \"C\" outside native/ and llm/<engine>/: $bad" >&2; exit 1; fi
pure=()
for d in sampler grid audit ingest record runs items internal/atomicfile internal/gguf resize/geom native internal/version rgb internal/splitmix; do [ -d "$d" ] && pure+=("./$d/..."); done
pure+=(./loader/) # not loader/load, which runs a loader through decode
pure+=(./decode/internal/h26x/) # the bitstream analysis, not decode itself
[ ${#pure[@]} -gt 0 ] && CGO_ENABLED=0 go build "${pure[@]}"
echo "check-cgo: ok" >&2
