#!/usr/bin/env bash
# Start cost against FFmpeg's floor (issue 43): the CPU time (user+sys) of framesweep commands that decode
# nothing and run no model, each beside `ffprobe -version`, interleaved round by round; medians.
#   bench/start/run.sh [--reps N] [--bin PATH]... [CMD ...]
# CMD defaults to "help" (e.g. help version "plan --help"); --bin may be given several times (default
# bin/framesweep) to time builds against each other in the same rounds. The CPU time is perf's
# task-clock when `perf stat` works here, else GNU time's %U+%S (10 ms steps: use more rounds).
# Prints, per binary and command, the median CPU seconds, ffprobe's median in the same rounds and their
# ratio, with the load average before and after. Ratios only: on a shared machine absolutes move with load.
set -euo pipefail
reps=7 bins=()
while [ $# -gt 0 ]; do
  case "$1" in
  --reps) reps=$2; shift 2 ;;
  --bin) bins+=("$2"); shift 2 ;;
  -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
  *) break ;;
  esac
done
[ ${#bins[@]} -gt 0 ] || bins=(bin/framesweep)
[ $# -gt 0 ] || set -- help
ffprobe=$(command -v ffprobe) || { echo "start: ffprobe not found" >&2; exit 1; }
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "start: $b is not an executable (build it first)" >&2; exit 1; }
  # A binary whose libraries do not resolve (its run path is $ORIGIN/../third_party/llama/lib: keep it in
  # bin/) would be timed failing in the loader.
  if ldd "$b" | grep -q 'not found'; then echo "start: $b: $(ldd "$b" | grep -m1 'not found')" >&2; exit 1; fi
done
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
if perf stat -x, -e task-clock -o "$tmp/p" true 2>/dev/null && grep -q task-clock "$tmp/p"; then
  clock="perf task-clock"
  cpu() { perf stat -x, -e task-clock -o "$tmp/p" "$@" >/dev/null 2>&1 || true; awk -F, '/task-clock/ {printf "%.4f\n", $1 / 1000}' "$tmp/p"; }
elif [ -x /usr/bin/time ]; then
  clock="GNU time %U+%S"
  cpu() { /usr/bin/time -f '%U %S' -o "$tmp/p" "$@" >/dev/null 2>&1 || true; awk 'END {printf "%.4f\n", $1 + $2}' "$tmp/p"; }
else
  echo "start: neither perf nor GNU time (/usr/bin/time) works here" >&2; exit 1
fi
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
key() { echo "$1" | tr -c 'A-Za-z0-9\n' _; }
load0=$(cut -d' ' -f1 /proc/loadavg)
for b in "${bins[@]}"; do cpu "$b" version >/dev/null; done # the page cache
cpu "$ffprobe" -version >/dev/null
for ((r = 0; r < reps; r++)); do
  for c in "$@"; do
    for i in "${!bins[@]}"; do
      # shellcheck disable=SC2086 # a command may carry its arguments
      cpu "${bins[$i]}" $c >>"$tmp/fs.$i.$(key "$c")"
      cpu "$ffprobe" -version >>"$tmp/ff.$i.$(key "$c")"
    done
  done
done
load1=$(cut -d' ' -f1 /proc/loadavg)
echo "# $reps rounds, $clock, load average $load0 -> $load1; ffprobe: $(ldd "$ffprobe" | wc -l) shared libraries"
for i in "${!bins[@]}"; do
  echo "# ${bins[$i]}: $(ldd "${bins[$i]}" | wc -l) shared libraries"
  for c in "$@"; do
    k=$(key "$c")
    fs=$(median <"$tmp/fs.$i.$k") ff=$(median <"$tmp/ff.$i.$k")
    awk -v b="${bins[$i]}" -v c="$c" -v fs="$fs" -v ff="$ff" \
      'BEGIN {printf "%s %-12s %.4f s   ffprobe -version %.4f s   ratio %.2f\n", b, c, fs, ff, fs / ff}'
  done
done
