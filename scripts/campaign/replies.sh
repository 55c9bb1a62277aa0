#!/usr/bin/env bash
# Hostile replay of the server-reply and resume classes of issue 32 against the built binary, with a
# hostile OpenAI-compatible server on 127.0.0.1 (hostile_server.py beside this script):
#   replies      200 replies that are no chat completion (a completions text, an empty or null
#                choice, a null content, no choices, a negative usage count, a null or positive
#                logprob, a key twice or in capitals): each must be an error record (error_kind
#                runtime), never an answer, the session must go on, and --resume must proceed
#   ratelimit    HTTP 429 with Retry-After: a transient error record, waited for, asked again by --resume
#   redirect     a 307 of the POST to another origin: refused, no request reaches the other server
#   memory       8 replies of 100 MB at once: each refused past the reply cap, peak RSS bounded
#   signal       SIGINT with 4 answers stalled in flight: no request after the signal, exit 1 soon
#                after --stop-grace
#   decoding     --resume with another --temperature, --llm-seed or --max-tokens: refused naming the flag
#   concurrency  an openai spec without concurrency= has 4 requests in flight (the documented default)
# Each case prints "held: ..." or "refused: ..." when the binary does the right thing and "ACCEPTED ..."
# when it does not; the script exits 1 if any case is accepted. Loopback only. All of it is the short
# form `make test` runs through scripts/campaign/run.sh (about 15 s here; --short changes nothing).
# usage: scripts/campaign/replies.sh [--short]     (FRAMESWEEP_BIN names the binary; default bin/framesweep)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${FRAMESWEEP_BIN:-$root/bin/framesweep}
[ -x "$bin" ] || { echo "replies.sh: no framesweep binary at $bin (make build, or set FRAMESWEEP_BIN)"; exit 2; }
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
accepted=0
say() { printf '  %-58s %s\n' "$1" "$2"; }
accept() { say "$1" "ACCEPTED $2"; accepted=$((accepted + 1)); }
# refuse DESC CAUSE CMD...: the command must exit ≠ 0 with a last stderr line matching CAUSE.
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
# server NAME [OTHER_PORT]: starts a hostile server whose state is $tmp/NAME; sets port.
server() {
  mkdir -p "$tmp/$1"
  python3 "$here/hostile_server.py" "$tmp/$1" "${2:-}" >"$tmp/$1/port" 2>"$tmp/$1/log" &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$tmp/$1/port" ] && break; sleep 0.05; done
  port=$(cat "$tmp/$1/port")
  [ -n "$port" ] || { echo "replies.sh: the hostile server did not start: $(cat "$tmp/$1/log")"; exit 2; }
}
# items FILE CASE...: one item per case (ids CASE, CASE2, … when a case repeats), its question naming it.
items() {
  local out=$1 n=0; shift
  : >"$out"
  for c; do
    n=$((n + 1))
    printf '{"item_id":"%s-%d","video":"%s","question":"Question case-%s?","options":["A. a","B. b"],"answer":"A"}\n' \
      "$c" "$n" "$root/testdata/videos/video_90.mov" "$c" >>"$out"
  done
}
arrivals() { [ -f "$tmp/$1/arrivals" ] && wc -l <"$tmp/$1/arrivals" | tr -d ' ' || echo 0; }
# check RUN PYTHON-EXPR: evaluates EXPR over recs (item_id → the record that stands: the last line).
check() {
  python3 - "$1/records.jsonl" "$2" <<'EOF'
import json, sys
recs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    recs[r["item_id"]] = r
print(eval(sys.argv[2]))
EOF
}
printf 'text_only: true\n' >"$tmp/text.yaml"
printf 'frames: [2]\npolicies: [uniform]\nresolutions: ["64x48"]\npipelines: [raw]\ntext_only: true\n' >"$tmp/frames.yaml"
sweep() { timeout 60 "$bin" sweep --items "$tmp/items.jsonl" --log-format json "$@"; }

echo "== replies that are no chat completion: error records, never answers"
server replies
cases="text emptychoice nullchoice nullcontent nochoices negcount nulllogprob poslogprob dupkey casekey"
ncases=$(echo $cases | wc -w)
# shellcheck disable=SC2086
items "$tmp/items.jsonl" $cases ok
sweep --grid "$tmp/text.yaml" --runtime "openai:url=http://127.0.0.1:$port/v1,model=m" --out "$tmp/r1" >"$tmp/out" 2>"$tmp/err"
code=$?
n=$(wc -l <"$tmp/r1/records.jsonl" 2>/dev/null | tr -d ' ')
if [ $code -ne 1 ] || [ "${n:-0}" != $((ncases + 1)) ]; then
  accept "a session with $ncases bad replies" "(exit $code, ${n:-0} records of $((ncases + 1)): $(tail -n 1 "$tmp/err" | cut -c1-80))"
fi
i=0
for c in $cases; do
  i=$((i + 1))
  got=$(check "$tmp/r1" "' '.join([recs.get('$c-$i', {}).get(k, '') for k in ('status', 'error_kind')] + [recs.get('$c-$i', {}).get('error', '').split('not a chat completion')[-1].split('ambiguous JSON')[-1].split(' (\"')[0].lstrip(': ')[:70]])" 2>&1)
  case $got in
    "error runtime "*) say "reply: $c" "held: ${got#error runtime }" ;;
    *) accept "reply: $c" "as: $(echo "$got" | cut -c1-80)" ;;
  esac
done
[ "$(check "$tmp/r1" "recs['ok-$((ncases + 1))']['status']" 2>/dev/null)" = ok ] || accept "a valid reply beside them" "not answered"
before=$(arrivals replies)
if sweep --grid "$tmp/text.yaml" --runtime "openai:url=http://127.0.0.1:$port/v1,model=m" --out "$tmp/r1" --resume >"$tmp/out" 2>"$tmp/err" &&
   [ "$(arrivals replies)" = "$before" ]; then
  say "--resume of that RUN" "held: proceeds, asks nothing again"
else
  accept "--resume of that RUN" "($(tail -n 1 "$tmp/err" | cut -c1-80))"
fi

echo "== HTTP 429 with Retry-After: transient, waited for, asked again by --resume"
server ratelimit
items "$tmp/items.jsonl" ratelimited ok
spec="openai:url=http://127.0.0.1:$port/v1,model=m,retries=1"
t0=$(date +%s.%N)
sweep --grid "$tmp/text.yaml" --runtime "$spec" --out "$tmp/r2" >/dev/null 2>"$tmp/err"
took=$(python3 -c "import sys; print(round($(date +%s.%N) - $t0, 2))")
got=$(check "$tmp/r2" "recs['ratelimited-1'].get('error_kind', recs['ratelimited-1']['status'])")
if [ "$got" = transient ] && python3 -c "import sys; sys.exit(0 if $took >= 0.9 else 1)"; then
  say "a 429 past the retries" "held: transient, after waiting ${took} s (Retry-After 1)"
else
  accept "a 429 past the retries" "as $got after ${took} s"
fi
touch "$tmp/ratelimit/healthy"
if sweep --grid "$tmp/text.yaml" --runtime "$spec" --out "$tmp/r2" --resume >/dev/null 2>"$tmp/err" &&
   [ "$(check "$tmp/r2" "recs['ratelimited-1']['status']")" = ok ]; then
  say "--resume once the server has room" "held: the 429 pair answered"
else
  accept "--resume once the server has room" "the 429 pair not asked again ($(tail -n 1 "$tmp/err" | cut -c1-60))"
fi

echo "== a 307 of the POST to another origin: refused, nothing sent there"
server elsewhere
other=$port
server redirect "$other"
items "$tmp/items.jsonl" redirect
sweep --grid "$tmp/frames.yaml" --runtime "openai:url=http://127.0.0.1:$port/v1,model=m" --out "$tmp/r3" >/dev/null 2>"$tmp/err"
got=$(check "$tmp/r3" "recs['redirect-1'].get('error_kind', recs['redirect-1']['status']) + ' ' + recs['redirect-1'].get('error', '').split('bad request: ')[-1][:90]")
if [ "$(arrivals elsewhere)" = 0 ] && [[ $got == runtime*"another origin"* ]]; then
  say "a 307 to 127.0.0.1:$other" "held: ${got#runtime }"
else
  accept "a 307 to 127.0.0.1:$other" "($(arrivals elsewhere) requests there; $got)"
fi

echo "== 8 replies of 100 MB at once: refused past the cap, memory bounded"
server huge
items "$tmp/items.jsonl" huge huge huge huge huge huge huge huge
/usr/bin/time -f '%M' -o "$tmp/rss" "$bin" sweep --items "$tmp/items.jsonl" --grid "$tmp/text.yaml" --log-format json \
  --runtime "openai:url=http://127.0.0.1:$port/v1,model=m,concurrency=8" --out "$tmp/r4" >/dev/null 2>"$tmp/err"
rss=$(($(tail -n 1 "$tmp/rss") / 1024))
got=$(check "$tmp/r4" "sum('over 16 MiB' in r.get('error', '') for r in recs.values())")
if [ "$got" = 8 ] && [ "$rss" -lt 512 ]; then
  say "8 × 100 MB replies, concurrency 8" "held: each refused over 16 MiB, peak RSS $rss MiB"
else
  accept "8 × 100 MB replies, concurrency 8" "($got refused, peak RSS $rss MiB; want 8 and < 512)"
fi

echo "== SIGINT with 4 answers stalled: nothing more sent, exit soon after --stop-grace 1s"
server stall
items "$tmp/items.jsonl" stall stall stall stall stall stall stall stall stall stall stall stall
"$bin" sweep --items "$tmp/items.jsonl" --grid "$tmp/text.yaml" --runtime "openai:url=http://127.0.0.1:$port/v1,model=m,concurrency=4" \
  --out "$tmp/r5" --stop-grace 1s --log-format json >/dev/null 2>"$tmp/err" &
spid=$!
for _ in $(seq 300); do [ "$(arrivals stall)" -ge 4 ] && break; sleep 0.05; done
sleep 0.3
sig=$(date +%s.%N)
kill -INT $spid
for _ in $(seq 300); do kill -0 $spid 2>/dev/null || break; sleep 0.05; done # 15 s at most
took=$(python3 -c "print(round($(date +%s.%N) - $sig, 2))")
if kill -0 $spid 2>/dev/null; then
  kill -KILL $spid
  accept "SIGINT" "(still running 15 s after the signal)"
else
  wait $spid
  code=$?
  after=$(python3 -c "print(sum(float(l) > $sig for l in open('$tmp/stall/arrivals')))" 2>/dev/null)
  if [ "$after" = 0 ] && [ $code = 1 ] && grep -q -- --resume "$tmp/err"; then
    say "SIGINT, 4 requests stalled, 8 queued" "held: 0 requests after it, exit 1 after ${took} s"
  else
    accept "SIGINT, 4 requests stalled, 8 queued" "($after requests after it, exit $code after ${took} s)"
  fi
fi

echo "== decoding settings are the RUN's: --resume with others is refused"
server decoding
items "$tmp/items.jsonl" ok ok
spec="openai:url=http://127.0.0.1:$port/v1,model=m"
sweep --grid "$tmp/text.yaml" --runtime "$spec" --out "$tmp/r6" --temperature 0.5 >/dev/null 2>&1 || accept "the first session" "failed"
[ "$(check "$tmp/r6" "all(r.get('decoding') == {'temperature': 0.5, 'seed': 0, 'max_tokens': 32} for r in recs.values())")" = True ] &&
  say "records carry their decoding" "held" || accept "records carry their decoding" "no"
resume=("$bin" sweep --items "$tmp/items.jsonl" --grid "$tmp/text.yaml" --runtime "$spec" --out "$tmp/r6" --resume)
refuse "--resume --temperature 0" '--temperature 0.5 vs 0' "${resume[@]}"
refuse "--resume --llm-seed 3" '--llm-seed 0 vs 3' "${resume[@]}" --temperature 0.5 --llm-seed 3
refuse "--resume --max-tokens 3" '--max-tokens 32 vs 3' "${resume[@]}" --temperature 0.5 --max-tokens 3

echo "== concurrency: without concurrency= an openai spec keeps 4 requests in flight"
server slow
items "$tmp/items.jsonl" slow slow slow slow slow slow slow slow
sweep --grid "$tmp/text.yaml" --runtime "openai:url=http://127.0.0.1:$port/v1,model=m" --out "$tmp/r7" >/dev/null 2>&1
peak=$(cat "$tmp/slow/peak" 2>/dev/null || echo 0)
[ "$peak" = 4 ] && say "8 slow answers, no concurrency=" "held: 4 in flight" || accept "8 slow answers, no concurrency=" "($peak in flight)"

if [ $accepted -gt 0 ]; then
  echo "replies.sh: $accepted case(s) accepted"
  exit 1
fi
echo "replies.sh: every case refused or held"
