#!/usr/bin/env bash
# `make demo`: the main job on the sample videos in testdata/videos, end to end, printing what it did.
# probe → plan (presets disagree) → grid plan → exact frames → extract (raw + cached, decode once) → verify
# → the main job: sweep examples/demo-items.jsonl × a 13-config grid (examples/demo-sweep-grid.yaml) through
# a tiny random-weight model of Qwen2-VL's architecture (llama.cpp in process) whose greedy answers change
# with its input: the audit finds headroom and churn, and they are NOISE → resume (nothing left) → audit
# the run into an HTML report → a second tiny model swept and compared (matched grid, ceiling) → the
# export, audited again from its files.
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
# Qwen2-VL's architecture: of the tiny models, the one whose greedy letter changes with the frames on these
# clips (the default llama model answers the same letter everywhere: headroom and churn 0).
"$FS" testmodel --out "$OUT/model" --arch qwen2vl > /dev/null
SPEC="llamacpp:model=$OUT/model/tiny-qwen2vl.gguf,mmproj=$OUT/model/tiny-qwen2vl-mmproj.gguf,threads=1"
"$FS" ask --runtime "$SPEC" "$V" \
  --question "What is shown in the video?" --options "A. a rocket launch" "B. a cooking show" "C. a football match" "D. a concert" \
  --preset qwen2.5-vl --frames 4 --template videomme --json

DEMO=(--grid examples/demo-sweep-grid.yaml --items examples/demo-items.jsonl --template videomme --cache "$OUT/cache")
step "sweep (the main job): every item of examples/demo-items.jsonl under every config of examples/demo-sweep-grid.yaml"
echo "   (text-only + 2, 4 and 8 frames × 2 resolutions × raw/cached; the TINY TEST MODEL's answers are NOISE:"
echo "    the run shows the machinery — decode once, exact inputs, resumable records — not a model's skill)"
"$FS" sweep "${DEMO[@]}" --runtime "$SPEC" --out "$OUT/run" --jobs 2 --log-format json > "$OUT/sweep.json"
py 'import json; d=json.load(open("'"$OUT"'/sweep.json")); print({k: d[k] for k in ("items","configs","pairs","pairs_done","pairs_failed","frames_decoded","frames_union","inputs_built","inputs_cached","runtime_seconds","seconds")})'
step "sweep --resume: every pair is recorded, nothing is decoded or asked again"
"$FS" sweep "${DEMO[@]}" --runtime "$SPEC" --out "$OUT/run" --resume --log-format json > "$OUT/resume.json"
py 'import json; d=json.load(open("'"$OUT"'/resume.json")); print({k: d[k] for k in ("pairs","pairs_recorded","pairs_done","frames_decoded")})'

step "audit: the run's item-level flows behind the aggregate curves (NOISE here: see above)"
"$FS" audit "$OUT/run" --md "$OUT/report.md" --html "$OUT/report.html" --json > "$OUT/audit.json"
py 'import json; d=json.load(open("'"$OUT"'/audit.json")); r=lambda k: "–" if d[k] is None else round(d[k], 1)
print("items", d["items"], "| best fixed", r("best_fixed"), "| oracle headroom", r("oracle_headroom"), "| visual confusion", r("visual_confusion_rate"), "| unstable", r("unstable_rate"), "| error records", d["error_records"]["count"], "| unparsed answers", d["unparsed"]["count"])
cs=d["configs"]; text=[c["id"] for c in cs if c["text_only"]]; lad={}
for c in sorted((c for c in cs if not c["text_only"]), key=lambda c: c["frames"]): lad.setdefault((c.get("width"), c.get("pipeline")), []).append(c["id"])
steps={(p["from"], p["to"]): p for p in d["pairs"]}; ps=[steps[a, b] for l in lad.values() for a, b in zip(text[:1] + l, l)]
print("churn along the %d ladders (text → 2 → 4 → 8 frames): %d items rescued, %d harmed in %d steps" % (len(lad), sum(p["rescued"] for p in ps), sum(p["harmed"] for p in ps), len(ps)))'
echo "   (a random-weight model's answers change with its input: this headroom and churn are NOISE, not a finding;"
echo "    they show what the audit measures — $OUT/report.html names the items and draws one curve per ladder)"

step "several models: the same sweep through a second tiny model (InternVL's architecture), audited together"
"$FS" testmodel --out "$OUT/model2" --arch internvl > /dev/null
SPEC2="llamacpp:model=$OUT/model2/tiny-internvl.gguf,mmproj=$OUT/model2/tiny-internvl-mmproj.gguf,threads=1"
"$FS" sweep "${DEMO[@]}" --runtime "$SPEC2" --out "$OUT/run2" --jobs 2 --log-format json > "$OUT/sweep2.json"
echo "   (a 4-frame ceiling for tiny-internvl marks the 8-frame configs over its ceiling: the matched grid is text + 2 and 4 frames)"
"$FS" audit "$OUT/run" "$OUT/run2" --ceiling tiny-internvl=4 --html "$OUT/models-report.html" --md "$OUT/models-report.md" \
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
