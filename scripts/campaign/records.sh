#!/usr/bin/env bash
# Hostile replay of the record classes of issue 23 against the built binary: a full disk under a
# sweep (its --cache, then the RUN itself), a corrupt cache object, importer schema drift (a renamed
# options column, a misspelt key, a Parquet footer with a flipped bit, ids that differ only in invalid
# UTF-8 or hold an escaped lone surrogate, a template no sweep accepts, a video path leaving
# --videos), and merge inputs the audit refuses (an item no other shard has standing in for a missing
# pair, values of the wrong type, a line over the limit, invalid UTF-8, one number written two ways,
# an output inside its input). Each case prints "refused: <the error>" or "held: ..." when the binary
# does the right thing, "ACCEPTED ..." when it does not; a refusal must name its cause (a pattern per
# case), so a refusal for another reason counts as accepted. The script exits 1 if any case is
# accepted. Loopback only: the model is the tiny test model, in process; nothing is mounted outside a
# private namespace. --short sweeps the first 4 items (what `make test` runs through
# scripts/campaign/run.sh: about 15 s here).
# usage: scripts/campaign/records.sh [--short]     (FRAMESWEEP_BIN names the binary; default bin/framesweep)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${FRAMESWEEP_BIN:-$root/bin/framesweep}
[ -x "$bin" ] || { echo "records.sh: no framesweep binary at $bin (make build, or set FRAMESWEEP_BIN)"; exit 2; }
limit=()
[ "${1:-}" = "--short" ] && limit=(--limit 4)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
accepted=0
say() { printf '  %-58s %s\n' "$1" "$2"; }
accept() { say "$1" "ACCEPTED $2"; accepted=$((accepted + 1)); }
# refuse DESC CAUSE CMD...: the command must exit ≠ 0 with a last stderr line matching CAUSE (an
# extended regular expression).
refuse() {
  local desc=$1 cause=$2; shift 2
  if timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"; then
    accept "$desc" "(exit 0)"
  elif ! tail -n 1 "$tmp/err" | grep -Eq -- "$cause"; then
    accept "$desc" "(refused for another reason: $(tail -n 1 "$tmp/err" | cut -c1-90))"
  else
    say "$desc" "refused: $(tail -n 1 "$tmp/err" | sed "s|$tmp/||g" | cut -c1-100)"
  fi
}
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
cd "$root"
grid=examples/sweep-grid.yaml items=examples/items.jsonl
"$bin" testmodel --out "$tmp/model" >"$tmp/model.json" || exit 2
spec="$(json "$tmp/model.json" 'd["spec"]'),threads=1"
sweep() { timeout 120 "$bin" sweep --grid "$grid" --items "$items" --runtime "$spec" --jobs 2 --log-format json "${limit[@]}" "$@"; }
# errors RUN: the error records of a RUN's records.jsonl.
errors() { grep -c '"status":"error"' "$1/records.jsonl" 2>/dev/null || true; }

echo "== a full disk under the sweep: no pair recorded as failed; --resume finishes"
# A real full filesystem: a small tmpfs (writes fail with ENOSPC), mounted in a private mount
# namespace of an unprivileged user namespace (unshare -rm: no root needed, nothing mounted outside
# this script), holding first the sweep's --cache (256 KiB: no input fits), then the RUN itself
# (16 KiB: run.json and the first records fit, then the records and the scratch inputs do not). With
# room again (remounted at 64 MiB), --resume must answer every pair and leave no error record.
cat >"$tmp/fulldisk.sh" <<'EOF'
set -uo pipefail
mnt=$tmp/small
mkdir -p "$mnt" && mount -t tmpfs -o size=64m tmpfs "$mnt" || exit 100
acc=0
say() { printf '  %-58s %s\n' "$1" "$2"; }
errors() { grep -c '"status":"error"' "$1/records.jsonl" 2>/dev/null || true; }
sweep() { timeout 120 "$bin" sweep --grid "$grid" --items "$items" --runtime "$spec" --jobs 2 --log-format json $limitflags "$@"; }
# full DESC SIZE RUN [sweep flags]
full() {
  local desc=$1 size=$2 run=$3; shift 3
  mount -o remount,size="$size" "$mnt"
  sweep --out "$run" "$@" >/dev/null 2>"$tmp/err"
  local code=$?
  if [ $code -eq 0 ]; then say "$desc" "ACCEPTED (exit 0: the disk was not full)"; acc=$((acc + 1))
  elif [ "$(errors "$run")" != 0 ]; then say "$desc" "ACCEPTED as $(errors "$run") error records"; acc=$((acc + 1))
  elif ! grep -q 'no space left on device' "$tmp/err"; then say "$desc" "ACCEPTED? exit $code without naming the full disk"; acc=$((acc + 1))
  else say "$desc" "held: exit $code, the full disk named, no error record"; fi
  mount -o remount,size=64m "$mnt"
  if sweep --out "$run" "$@" --resume >"$tmp/out" 2>"$tmp/err" && [ "$(errors "$run")" = 0 ] &&
     [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pairs"])' "$tmp/out")" = "$(wc -l <"$run/records.jsonl" | tr -d ' ')" ]; then
    say "  --resume once the disk has room" "held: every pair answered once"
  else
    say "  --resume once the disk has room" "ACCEPTED a RUN left incomplete or poisoned ($(tail -n 1 "$tmp/err" | cut -c1-50))"; acc=$((acc + 1))
  fi
  rm -rf "${mnt:?}"/*
}
full "--cache on a full filesystem" 256k "$tmp/full1" --cache "$mnt/cache"
full "the RUN on a full filesystem" 16k "$mnt/run"
umount "$mnt"
exit $acc
EOF
export bin grid items spec tmp limitflags="${limit[*]}"
if unshare -rm true 2>/dev/null; then
  unshare -rm bash "$tmp/fulldisk.sh"
else
  bash "$tmp/fulldisk.sh" # root where mounts are allowed; else it exits 100
fi
code=$?
if [ $code -eq 100 ]; then
  [ "${CI:-}" = true ] && { echo "records.sh: cannot mount a small tmpfs (no user namespace, not root) and CI=true"; exit 1; }
  say "a full disk" "skipped (no user namespace and not root: cannot mount a tmpfs)"
else
  accepted=$((accepted + code))
fi

echo "== a corrupt cache object: rebuilt, no pair failed"
sweep --out "$tmp/c1" --cache "$tmp/cache" >/dev/null 2>&1 || { echo "records.sh: the first sweep failed"; exit 1; }
for o in "$tmp"/cache/cas/sha256/*/*; do
  python3 - "$o" <<'EOF'
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); b[len(b) - len(b)//4] ^= 0x40; open(p, 'wb').write(b)
EOF
done
if sweep --out "$tmp/c2" --cache "$tmp/cache" >"$tmp/out" 2>"$tmp/err" && [ "$(errors "$tmp/c2")" = 0 ] && [ "$(json "$tmp/out" 'd["inputs_rebuilt"]')" -gt 0 ]; then
  say "a sweep on a cache with flipped bits" "held: $(json "$tmp/out" 'd["inputs_rebuilt"]') inputs rebuilt"
else
  accept "a sweep on a cache with flipped bits" "as $(errors "$tmp/c2") error records"
fi

echo "== importer schema drift"
mkdir -p "$tmp/videos" "$tmp/rel"
cp testdata/videos/video_90.mov "$tmp/videos/fFjv93ACGo8.mp4"
cp testdata/videos/video_90.mov "$tmp/videos/movie101_66.mp4"
cp testdata/videos/video_90.mov "$tmp/outside.mp4"
imp=("$bin" items import --video-dir "$tmp/videos" --out "$tmp/items.jsonl")
row='{"video_id":"001","duration":"short","videoID":"fFjv93ACGo8","question_id":"001-1","task_type":"Counting Problem","question":"How many?","options":["A. 1","B. 2"],"answer":"B"}'
echo "${row/\"options\"/\"choices\"}" >"$tmp/rel/vmme.jsonl"
refuse "Video-MME, options column named choices" 'unknown key "choices".*--map' "${imp[@]}" videomme "$tmp/rel/vmme.jsonl"
echo '[{"video":"movie101_66.mp4","duration":246,"question":"Which?","candidate":["Yellow","Red"],"answer":"Yellow","question_type":"plotQA"}]' >"$tmp/rel/1_plotQA.json"
refuse "MLVU, candidates misspelt" 'unknown key "candidate"' "${imp[@]}" mlvu "$tmp/rel/1_plotQA.json"
echo '[{"video":"movie101_66.mp4","duration":246,"question":"Describe it.","answr":"A man runs.","question_type":"subPlot"}]' >"$tmp/rel/8_sub_scene.json"
refuse "MLVU generation, answer misspelt" 'unknown key "answr"' "${imp[@]}" mlvu-gen "$tmp/rel/8_sub_scene.json"
echo '{"dialogs":[{"image_id":"fFjv93ACGo8","caption":"c","summary":"s","dialog":[{"question":"q","answer":"a","answer_2":"b"}]}]}' >"$tmp/rel/valid_set4DSTC7-AVSD.json"
refuse "AVSD, a turn key it does not know" 'unknown key "answer_2"' "${imp[@]}" avsd "$tmp/rel/valid_set4DSTC7-AVSD.json"
printf 'item_id,video,question,answer\nq\xff,fFjv93ACGo8.mp4,Q,free\nq\xfe,fFjv93ACGo8.mp4,Q,free\n' >"$tmp/rel/ids.csv"
refuse "CSV, ids that differ only in invalid UTF-8" 'ids.csv:2: not valid UTF-8' "${imp[@]}" csv "$tmp/rel/ids.csv"
printf '%s\n' '{"videoID":"fFjv93ACGo8","question_id":"001-1\udc80","question":"How many?","options":["A. 1","B. 2"],"answer":"B"}' >"$tmp/rel/sur.jsonl"
refuse "Video-MME, an id with an escaped lone surrogate" 'lone surrogate' "${imp[@]}" videomme "$tmp/rel/sur.jsonl"
printf 'item_id,video,question,answer,template\nq,fFjv93ACGo8.mp4,Q,free,nonesuch\n' >"$tmp/rel/tpl.csv"
refuse "CSV, a template no sweep accepts" 'template "nonesuch"' "${imp[@]}" csv "$tmp/rel/tpl.csv"
# Parquet: the fixture imports; with one bit of its footer flipped ("options" -> "optionr" in the
# schema) it is refused naming the column, not imported without options.
cp items/testdata/videomme.parquet "$tmp/rel/ok.parquet"
if "${imp[@]}" videomme "$tmp/rel/ok.parquet" >/dev/null 2>&1; then
  python3 - "$tmp/rel/ok.parquet" "$tmp/rel/flip.parquet" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
foot = len(b) - 8 - struct.unpack('<I', b[-8:-4])[0]
i = b.index(b'options', foot)
b[i + 6] ^= 1
open(sys.argv[2], 'wb').write(b)
EOF
  refuse "Video-MME Parquet, a bit flipped in the footer" 'optionr' "${imp[@]}" videomme "$tmp/rel/flip.parquet"
else
  say "Video-MME Parquet, a bit flipped in the footer" "skipped (this binary reads no Parquet: -tags noparquet)"
fi
printf 'item_id,video,question,answer\nin,fFjv93ACGo8.mp4,Q,free\nup,../outside.mp4,Q,free\n' >"$tmp/rel/up.csv"
if "${imp[@]}" csv "$tmp/rel/up.csv" >"$tmp/out" 2>/dev/null && ! grep -q '"up"' "$tmp/items.jsonl" && grep -q outside "$tmp/out"; then
  say "CSV, a video path that leaves --videos" "held: listed as missing, its item left out"
else
  accept "CSV, a video path that leaves --videos" "as an item"
fi

echo "== merge inputs the audit refuses, an output inside its input"
run=$tmp/c1
# variant NAME LINE FROM TO: a copy of the RUN whose record line LINE (0: every line) has FROM (a regular
# expression) replaced by TO (edit_records.py: \xNN a byte, {N*c} c N times).
variant() {
  mkdir -p "$tmp/v/$1" && cp "$run/run.json" "$tmp/v/$1/" &&
    python3 "$root/scripts/campaign/edit_records.py" "$run/records.jsonl" "$tmp/v/$1/records.jsonl" "$2" "$3" "$4"
}
mrg=("$bin" merge)
# A shard holding a record of an item no other shard has, in place of one of its own pairs: the
# merge counts against the items, so it is neither complete nor silent.
variant foreign 1 '"item_id":"' '"item_id":"zz-'
refuse "a foreign item standing in for a missing pair" 'is not in the items file' "${mrg[@]}" "$tmp/v/foreign" --out "$tmp/m1"
variant type 2 '"correct":(true|false)' '"correct":"yes"'
refuse "a value of the wrong type (correct)" 'field .*correct' "${mrg[@]}" "$tmp/v/type" --out "$tmp/m2"
variant fps 3 '"status":"ok"' '"status":"ok","video_fps":"2"'
refuse "a sweep field of the wrong type (video_fps)" 'video_fps' "${mrg[@]}" "$tmp/v/fps" --out "$tmp/m3"
variant mode 0 '"input_mode":"[^"]*"' '"input_mode":"frames"'
refuse "an input_mode no runtime writes" 'input_mode "frames"' "${mrg[@]}" "$tmp/v/mode" --out "$tmp/m4"
variant model 5 '"model":"[^"]*"' '"model":{"name":"m"}'
refuse "a model that is not a string" 'field .*model' "${mrg[@]}" "$tmp/v/model" --out "$tmp/m5"
variant utf8 6 '"response":"' '"response":"\xff'
refuse "invalid UTF-8" 'invalid UTF-8' "${mrg[@]}" "$tmp/v/utf8" --out "$tmp/m6"
variant long 7 '"response":"' '"response":"{17000000*x}'
refuse "a line over the 16 MiB limit" 'line too long' "${mrg[@]}" "$tmp/v/long" --out "$tmp/m7"
variant half 0 '"confidence":[-0-9.e]*' '"confidence":0.5'
variant halfe 0 '"confidence":[-0-9.e]*' '"confidence":5e-1'
if "${mrg[@]}" "$tmp/v/half" "$tmp/v/halfe" --out "$tmp/m8" >"$tmp/out" 2>"$tmp/err" &&
   [ "$(json "$tmp/out" 'd["duplicates"]')" = "$(wc -l <"$run/records.jsonl" | tr -d ' ')" ]; then
  say "0.5 and 5e-1 (one number)" "held: duplicates, not a conflict"
else
  accept "0.5 and 5e-1 (one number)" "as a conflict: $(tail -n 1 "$tmp/err" | cut -c1-60)"
fi
refuse "--out inside the input RUN" 'inside the input RUN' "${mrg[@]}" "$run" --out "$run/merged"
refuse "--out the input's chunks directory" 'inside the input RUN' "${mrg[@]}" "$run" --out "$run/records"

if [ $accepted -gt 0 ]; then
  echo "records.sh: $accepted case(s) accepted"
  exit 1
fi
echo "records.sh: every case refused or held"
