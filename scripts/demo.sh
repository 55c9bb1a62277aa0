#!/usr/bin/env bash
# `make demo`: the main job on the sample videos in testdata/videos, end to end, printing what it did.
# probe → plan (presets disagree) → grid plan → exact frames → extract (raw + cached, decode once) → verify
# → ask a tiny test model through llama.cpp (answers are noise) → audit the example records (HTML report).
set -euo pipefail
cd "$(dirname "$0")/.."
FS=bin/framesweep
OUT=out/demo
rm -rf "$OUT"; mkdir -p "$OUT"
V=testdata/videos/nasa_13013.mp4
step() { printf '\n== %s\n' "$*"; }
py() { /usr/bin/python3 -c "$1"; }

step "probe: frame counts come from a demux scan, not the header"
for v in testdata/videos/*; do "$FS" probe "$v"; done

step "plan: the same '16 frames' under three stacks ($V)"
for p in qwen2.5-vl lmms-eval vlmevalkit; do
  printf '%-11s ' "$p"; "$FS" plan "$V" --preset "$p" --frames 16 --json | py 'import json,sys; print(json.load(sys.stdin)["indices"])'
done

step "plan --grid examples/grid.yaml: every config, the union, the decode plan"
"$FS" plan --grid examples/grid.yaml "$V" --json > "$OUT/grid-plan.json"
py 'import json; d=json.load(open("'"$OUT"'/grid-plan.json")); print({k: v for k, v in d.items() if k not in ("configs","union","plans")})' || true

step "frames: exact frames by index, resized with the Pillow-exact bicubic kernel"
"$FS" frames "$V" --indices 0,100,324 --out "$OUT/frames" --size 448x448 --kernel pil-bicubic
ls "$OUT/frames"

step "extract: decode each video once for the whole grid, raw and cached (JPEG q75) pipelines"
"$FS" extract --grid examples/demo-grid.yaml --videos testdata/videos/nasa_13013.mp4 \
  --out "$OUT/cache" --pipeline both --jobs 2
step "extract again: every object verified and skipped (byte-identical rerun)"
"$FS" extract --grid examples/demo-grid.yaml --videos testdata/videos/nasa_13013.mp4 \
  --out "$OUT/cache" --pipeline both --jobs 2
step "verify: re-hash every cached object"
"$FS" verify "$OUT/cache"

step "ask: one question through llama.cpp + mtmd in process (tiny random-weight model: its answers are noise)"
"$FS" testmodel --out "$OUT/model" > /dev/null
"$FS" ask --runtime "llamacpp:model=$OUT/model/tiny-llama.gguf,mmproj=$OUT/model/tiny-mmproj.gguf,threads=1" "$V" \
  --question "What is shown in the video?" --options "A. a rocket launch" "B. a cooking show" "C. a football match" "D. a concert" \
  --preset qwen2.5-vl --frames 4 --template videomme --json

step "audit: item-level flows behind the aggregate curve (examples/records/demo.jsonl)"
"$FS" audit examples/records/demo.jsonl --md "$OUT/report.md" --html "$OUT/report.html" --json > "$OUT/audit.json"
py 'import json; d=json.load(open("'"$OUT"'/audit.json")); print("items", d["items"], "| best fixed", d["best_fixed"], "| oracle headroom", d["oracle_headroom"], "| visual confusion", d["visual_confusion_rate"])'
echo
echo "report: $OUT/report.html (self-contained), $OUT/report.md; cache: $OUT/cache"
