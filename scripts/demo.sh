#!/usr/bin/env bash
# `make demo`: the main job on the sample videos in testdata/videos, end to end, printing what it did.
# probe → plan (presets disagree) → grid plan → exact frames → extract (raw + cached, decode once) → verify
# → the main job: sweep examples/items.jsonl × a 9-config grid through a tiny test model (llama.cpp in
# process; its answers are noise) → resume (nothing left) → audit the run into an HTML report → a second
# tiny model swept and compared (matched grid, ceiling) → the export, audited again from its files.
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
SPEC="llamacpp:model=$OUT/model/tiny-llama.gguf,mmproj=$OUT/model/tiny-mmproj.gguf,threads=1"
"$FS" ask --runtime "$SPEC" "$V" \
  --question "What is shown in the video?" --options "A. a rocket launch" "B. a cooking show" "C. a football match" "D. a concert" \
  --preset qwen2.5-vl --frames 4 --template videomme --json

step "sweep (the main job): every item of examples/items.jsonl under every config of examples/sweep-grid.yaml"
echo "   (text-only + 2 budgets × 2 resolutions × raw/cached; the TINY TEST MODEL's answers are NOISE:"
echo "    the run shows the machinery — decode once, exact inputs, resumable records — not a model's skill)"
"$FS" sweep --grid examples/sweep-grid.yaml --items examples/items.jsonl --runtime "$SPEC" --out "$OUT/run" --template videomme \
  --cache "$OUT/cache" --jobs 2 --log-format json > "$OUT/sweep.json"
py 'import json; d=json.load(open("'"$OUT"'/sweep.json")); print({k: d[k] for k in ("items","configs","pairs","pairs_done","pairs_failed","frames_decoded","frames_union","inputs_built","inputs_cached","runtime_seconds","seconds")})'
step "sweep --resume: every pair is recorded, nothing is decoded or asked again"
"$FS" sweep --grid examples/sweep-grid.yaml --items examples/items.jsonl --runtime "$SPEC" --out "$OUT/run" --template videomme \
  --cache "$OUT/cache" --resume --log-format json > "$OUT/resume.json"
py 'import json; d=json.load(open("'"$OUT"'/resume.json")); print({k: d[k] for k in ("pairs","pairs_recorded","pairs_done","frames_decoded")})'

step "audit: the run's item-level flows behind the aggregate curve (noise here: see above)"
"$FS" audit "$OUT/run" --md "$OUT/report.md" --html "$OUT/report.html" --json > "$OUT/audit.json"
py 'import json; d=json.load(open("'"$OUT"'/audit.json")); print("items", d["items"], "| best fixed", round(d["best_fixed"], 1), "| oracle headroom", round(d["oracle_headroom"], 1), "| visual confusion", round(d["visual_confusion_rate"], 1), "| error records", d["error_records"]["count"], "| unparsed answers", d["unparsed"]["count"])'

step "several models: the same sweep through a second tiny model (InternVL's architecture), audited together"
"$FS" testmodel --out "$OUT/model2" --arch internvl > /dev/null
SPEC2="llamacpp:model=$OUT/model2/tiny-internvl.gguf,mmproj=$OUT/model2/tiny-internvl-mmproj.gguf,threads=1"
"$FS" sweep --grid examples/sweep-grid.yaml --items examples/items.jsonl --runtime "$SPEC2" --out "$OUT/run2" --template videomme \
  --cache "$OUT/cache" --jobs 2 --log-format json > "$OUT/sweep2.json"
echo "   (a 2-frame ceiling for tiny-internvl marks the 3-frame configs over its ceiling: the matched grid is text + 2 frames)"
"$FS" audit "$OUT/run" "$OUT/run2" --ceiling tiny-internvl=2 --html "$OUT/models-report.html" --md "$OUT/models-report.md" \
  --export "$OUT/export" --json > "$OUT/models-audit.json"
py 'import json; d=json.load(open("'"$OUT"'/models-audit.json")); g=d["matched_grid"]; print("models", d["models"], "| matched grid", g["configs"], "| over the ceiling", [m["model"]+":"+m["config"] for m in g["over_ceiling"]], "| mean Jaccard of confused sets", d["cross_model"]["mean_jaccard"])'
step "the export (records, trajectories and tags, provenance, datasheet) audits to the same JSON, and reads with NumPy alone"
ls "$OUT/export"
"$FS" audit "$OUT/export" --json > "$OUT/export-audit.json"
cmp "$OUT/models-audit.json" "$OUT/export-audit.json" && echo "   audit of $OUT/export = the audit it was exported from (byte for byte)"
py 'import json, sys, numpy as np
rows = [json.loads(l) for l in open("'"$OUT"'/export/records.jsonl")]
ok = [r for r in rows if r.get("status", "ok") == "ok" and "correct" in r]
for m in sorted({r["model"] for r in ok}):
    print("  ", m, "accuracy over all its records:", round(100 * np.mean([r["correct"] for r in ok if r["model"] == m]), 1), "| pyarrow/pandas loaded:", "pyarrow" in sys.modules or "pandas" in sys.modules)'

step "audit of a realistic example (examples/records/demo.jsonl: synthetic records with real churn)"
"$FS" audit examples/records/demo.jsonl --html "$OUT/example-report.html" --json > "$OUT/example-audit.json"
py 'import json; d=json.load(open("'"$OUT"'/example-audit.json")); print("items", d["items"], "| best fixed", round(d["best_fixed"], 1), "| oracle headroom", round(d["oracle_headroom"], 1), "| visual confusion", round(d["visual_confusion_rate"], 1))'
echo
echo "report of the sweep: $OUT/report.html (self-contained), $OUT/report.md; records: $OUT/run/records.jsonl"
echo "two models compared: $OUT/models-report.html, $OUT/models-report.md; the release: $OUT/export (README.md is its datasheet)"
echo "example report: $OUT/example-report.html; cache: $OUT/cache"
