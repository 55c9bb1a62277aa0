#!/usr/bin/env bash
# Hostile replay of the input classes of issue 32 against the built binary:
#   exports   a tampered export (a flipped verdict, a deleted row, a records file slipped in beside,
#             10^9 resamples in export.json) audited as if true; concurrent exports into one directory
#             both "succeeding"
#   numbers   NaN, ±Inf, negative and huge values of numeric flags and file fields taken silently, or
#             refused for another reason (--min-pixels NaN once said "max_pixels below min_pixels"),
#             or refused only after work (--temperature -1 once wrote an error record per pair)
#   importers options present but empty imported as an open-ended item; a line over the sweep's limit
#             written to ITEMS.jsonl; an over-long audit-side record written partly before the refusal
#   markdown  markup from a record (a model name with <script>, a newline, "|") reaching audit --md or
#             the export's README.md
#   serve     a request naming a key twice or in another case taken; /v1/plan and /v1/frames
#             disagreeing on a cut file; a message naming /proc/self/fd/N instead of the video
# Each case prints "refused: <the error>" or "held: ..." when the binary does the right thing, "ACCEPTED
# ..." when it does not; a refusal must name its cause (a pattern per case), so a refusal for another
# reason counts as accepted. Exits 1 if any case is accepted. Loopback only. --short (what `make test`
# runs through scripts/campaign/run.sh) races the concurrent exports 3 times instead of 10: about 10 s.
# usage: scripts/campaign/inputs.sh [--short]     (FRAMESWEEP_BIN names the binary; default bin/framesweep)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${FRAMESWEEP_BIN:-$root/bin/framesweep}
[ -x "$bin" ] || { echo "inputs.sh: no framesweep binary at $bin (make build, or set FRAMESWEEP_BIN)"; exit 2; }
races=10
[ "${1:-}" = "--short" ] && races=3
tmp=$(mktemp -d)
spid=
cleanup() {
  [ -n "$spid" ] && kill "$spid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
accepted=0
say() { printf '  %-62s %s\n' "$1" "$2"; }
accept() { say "$1" "ACCEPTED $2"; accepted=$((accepted + 1)); }
# refuse DESC STATUS CAUSE CMD...: the command must exit STATUS within 20 s with a last stderr line
# matching CAUSE (an extended regular expression).
refuse() {
  local desc=$1 want=$2 cause=$3 code
  shift 3
  timeout 20 "$@" >"$tmp/out" 2>"$tmp/err"
  code=$?
  if [ $code -eq 0 ]; then
    accept "$desc" "(exit 0)"
  elif [ $code -eq 124 ]; then
    accept "$desc" "(still running after 20 s)"
  elif [ $code -ne "$want" ] || ! tail -n 1 "$tmp/err" | grep -Eq -- "$cause"; then
    accept "$desc" "(exit $code: $(tail -n 1 "$tmp/err" | cut -c1-90))"
  else
    say "$desc" "refused: $(tail -n 1 "$tmp/err" | sed "s|$tmp/||g" | cut -c1-100)"
  fi
}
cd "$root"
demo=examples/records/demo.jsonl

echo "== exports"
exp=$tmp/exp
"$bin" audit "$demo" --resamples 20 --export "$exp" >/dev/null 2>"$tmp/err" || { echo "inputs.sh: the export failed: $(cat "$tmp/err")"; exit 1; }
copy() { rm -rf "$tmp/$1" && cp -r "$exp" "$tmp/$1"; }
copy flip && python3 - "$tmp/flip/records.jsonl" <<'EOF'
import sys
p = sys.argv[1]; b = open(p, 'rb').read(); open(p, 'wb').write(b.replace(b'"correct":false', b'"correct":true', 1))
EOF
refuse "a flipped verdict" 1 'flip/records.jsonl: ' "$bin" audit "$tmp/flip" --json
copy drop && sed -i 1d "$tmp/drop/records.jsonl"
refuse "a deleted row" 1 'drop/records.jsonl: ' "$bin" audit "$tmp/drop" --json
copy extra && head -n 1 "$exp/records.jsonl" >"$tmp/extra/records-more.jsonl"
refuse "a records file slipped in beside" 1 'records-more.jsonl: not in export.json' "$bin" audit "$tmp/extra" --json
copy big && python3 - "$tmp/big/export.json" <<'EOF'
import json, sys
p = sys.argv[1]; m = json.load(open(p)); m["audit_options"]["resamples"] = 1000000000; json.dump(m, open(p, "w"))
EOF
refuse "export.json resamples 10^9" 1 'audit_options.resamples 1000000000: out of range' "$bin" audit "$tmp/big" --json
refuse "cascade of a tampered export" 1 'flip/records.jsonl: ' "$bin" cascade "$tmp/flip" --json
both=0
for i in $(seq "$races"); do
  d=$tmp/race$i/new
  "$bin" audit "$demo" --resamples 0 --export "$d" >/dev/null 2>"$tmp/r1" &
  p1=$!
  "$bin" audit "$demo" --resamples 0 --export "$d" >/dev/null 2>"$tmp/r2" &
  p2=$!
  wait $p1; c1=$?
  wait $p2; c2=$?
  if [ $((c1 == 0)) -eq $((c2 == 0)) ] || ! cat "$tmp/r1" "$tmp/r2" | grep -Eq 'another export claimed|not empty'; then
    both=$((both + 1))
  fi
done
if [ $both -eq 0 ]; then say "two concurrent exports into one new directory" "held: exactly one succeeded, $races of $races"; else accept "two concurrent exports into one new directory" "($both of $races races not one winner)"; fi

echo "== numbers"
refuse "plan --min-pixels NaN" 2 'flag -min-pixels: not a number' "$bin" plan testdata/videos/video_90.mov --loader qwen-vl-utils --frames 2 --min-pixels NaN
refuse "sweep --threshold NaN" 2 'flag -threshold: not a number' "$bin" sweep --threshold NaN
refuse "audit --resamples 1000000000" 2 'flag -resamples: out of range' "$bin" audit "$demo" --resamples 1000000000
refuse "audit --epsilon Inf" 2 'flag -epsilon: not finite' "$bin" audit "$demo" --epsilon Inf
refuse "serve --max-response-mb 10^15 (overflows << 20)" 2 'flag -max-response-mb: out of range' "$bin" serve --root . --max-response-mb 1000000000000000
for t in -1 NaN; do
  refuse "sweep --temperature $t (a complete sweep)" 2 'flag -temperature: ' "$bin" sweep --grid examples/sweep-grid.yaml --items examples/items.jsonl \
    --runtime openai:url=http://127.0.0.1:1/v1,model=m --out "$tmp/run$t" --temperature "$t"
  [ -e "$tmp/run$t" ] && accept "  sweep --temperature $t" "(a RUN was created before the refusal)"
done
refuse "a runtime spec concurrency=10^9" 2 'concurrency=1000000000: out of range' "$bin" ask --runtime openai:url=http://127.0.0.1:1/v1,model=m,concurrency=1000000000 --question q --options "A. x" --text-only
mkdir -p "$tmp/videos" && cp testdata/videos/video_90.mov "$tmp/videos/a.mp4"
printf 'item_id,video,question,answer,duration_s\nq,a.mp4,Q,free,Inf\n' >"$tmp/inf.csv"
refuse "a CSV duration_s of Inf" 1 'inf.csv:2: duration_s Inf: not finite' "$bin" items import csv "$tmp/inf.csv" --video-dir "$tmp/videos" --out "$tmp/items.jsonl"

echo "== importers"
imp=("$bin" items import --video-dir "$tmp/videos" --out "$tmp/items.jsonl")
echo '{"videoID":"a","question_id":"1","question":"How many?","options":[],"answer":"A"}' >"$tmp/empty.jsonl"
refuse "Video-MME options []" 1 '"options" is an empty list' "${imp[@]}" videomme "$tmp/empty.jsonl"
printf 'item_id,video,question,options,answer\nq,a.mp4,Q,[],A\n' >"$tmp/empty.csv"
refuse "CSV options []" 1 'empty.csv:2: options "\[\]" is an empty list' "${imp[@]}" csv "$tmp/empty.csv"
python3 -c 'import sys; open(sys.argv[1], "w").write("item_id,video,question,answer\nq,a.mp4," + "x" * (5 << 20) + ",free\n")' "$tmp/long.csv"
rm -f "$tmp/items.jsonl"
refuse "a 5 MiB question (the sweep's line limit is 4 MiB)" 1 'line limit of an items file' "${imp[@]}" csv "$tmp/long.csv"
[ -e "$tmp/items.jsonl" ] && accept "  the 5 MiB question" "(ITEMS.jsonl written)"
python3 - "$tmp/m_Video-MME.tsv" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("index\tquestion\tanswer\tprediction\n")
    for i in range(1, 301):
        f.write(f"{i}\tq\tB\tB\n")
    f.write("301\tq\tB\t" + "x" * (17 << 20) + "\n")
EOF
refuse "an audit-side record over 16 MiB" 1 'm_Video-MME.tsv:302: .*line too long' "$bin" ingest vlmevalkit "$tmp/m_Video-MME.tsv" --config c --text-only --rescore text
[ -s "$tmp/out" ] && accept "  the over-long record" "($(wc -c <"$tmp/out") bytes written before the refusal)"

echo "== markdown"
python3 - "$tmp/md.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for m in ["<script>alert(1)</script>", "a|b\nc"]:
        for i in range(6):
            for k, c in enumerate(["[x](javascript:alert(1))", "<img src=x onerror=alert(1)>"]):
                f.write(json.dumps({"item_id": f"q{i}", "config": c, "model": m, "correct": (i + k) % 3 != 0,
                                    "config_meta": {"frames": 8 << k}}) + "\n")
EOF
if "$bin" audit "$tmp/md.jsonl" --resamples 0 --md "$tmp/r.md" --export "$tmp/mdexp" >/dev/null 2>"$tmp/err"; then
  for f in "$tmp/r.md" "$tmp/mdexp/README.md"; do
    if python3 - "$f" <<'EOF'
import re, sys
bad = [l for l in open(sys.argv[1]).read().split("```")[0::2] for l in l.split("\n")
       if re.search(r"(?<!\\)<", l) or re.search(r"(?<!\\)\]\(", l)]
sys.exit(1 if bad else 0)
EOF
    then say "markup from a model name in $(basename "$f")" "held: escaped"; else accept "markup from a model name in $(basename "$f")" "(raw markup)"; fi
  done
else
  accept "audit --md of hostile names" "(failed: $(tail -n 1 "$tmp/err" | cut -c1-80))"
fi

echo "== serve"
mkdir -p "$tmp/root"
cp testdata/videos/nasa_13013.mp4 "$tmp/root/"
if command -v ffmpeg >/dev/null; then
  ffmpeg -v error -y -i testdata/videos/video_90.mov -c copy -movflags +faststart "$tmp/fast.mov" &&
    python3 -c 'import sys; b = open(sys.argv[1], "rb").read(); open(sys.argv[2], "wb").write(b[:len(b) * 9 // 10])' "$tmp/fast.mov" "$tmp/root/cut.mov"
fi
"$bin" serve --addr 127.0.0.1:0 --root "$tmp/root" >"$tmp/ready" 2>"$tmp/serve.log" &
spid=$!
for _ in $(seq 100); do [ -s "$tmp/ready" ] && break; sleep 0.1; done
url=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$tmp/ready" 2>/dev/null) || { accept "serve" "(did not start: $(cat "$tmp/serve.log"))"; url=; }
if [ -n "$url" ]; then
  res=$(python3 - "$url" "$tmp/root" <<'EOF'
import http.client, json, os, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
def post(path, body):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    c.request("POST", path, body, {"Content-Type": "application/json"})
    r = c.getresponse()
    return r.status, r.read()
ok = '"video":"nasa_13013.mp4","policy":"uniform"'
out = []
for body in ['{' + ok + ',"frames":8,"frames":16}', '{' + ok + ',"Frames":8}', '{' + ok + ',"FRAMES":8}', '{' + ok + ',"frames":8,"\\u0066rames":16}']:
    st, b = post("/v1/plan", body)
    out.append(("held" if st == 400 else "ACCEPTED") + f" {st}: {body[len(ok) + 2:]}")
if os.path.exists(os.path.join(sys.argv[2], "cut.mov")):
    for l in ["lmms-eval", "lmms-eval/torchcodec", "qwen-vl-utils", "qwen-vl-utils/decord", "vlmevalkit"]:
        body = json.dumps({"video": "cut.mov", "loader": l, "frames": 2})
        (p, pb), (f, fb) = post("/v1/plan", body), post("/v1/frames", body)
        fd = b"/proc/self/fd" in pb + fb
        out.append(("held" if p == f and p < 500 and not fd else "ACCEPTED") + f" cut.mov {l}: plan {p}, frames {f}" + (" (names /proc/self/fd)" if fd else ""))
else:
    out.append("skipped: no ffmpeg to make a cut MP4")
print("\n".join(out))
EOF
)
  while IFS= read -r line; do
    case $line in
      ACCEPTED*) accept "serve: ${line#ACCEPTED }" "" ;;
      skipped*) [ "${CI:-}" = true ] && accept "serve: cut file" "(ffmpeg missing and CI=true)" || say "serve: cut file" "$line" ;;
      *) say "serve: ${line#held }" "held" ;;
    esac
  done <<<"$res"
fi

if [ $accepted -gt 0 ]; then
  echo "inputs.sh: $accepted case(s) accepted"
  exit 1
fi
echo "inputs.sh: every case refused or held"
