#!/usr/bin/env bash
# Runs every hostile-replay script beside this one (scripts/campaign/*.sh), each under a time limit, and
# exits 1 if any fails. --short is passed on: the bounded form `make test` runs.
# usage: scripts/campaign/run.sh [--short]      (FRAMESWEEP_BIN names the binary the scripts use)
set -uo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
limit=120
[ "${1:-}" = "--short" ] && limit=90
failed=()
for s in "$dir"/*.sh; do
  [ "$(basename "$s")" = run.sh ] && continue
  echo "== campaign: $(basename "$s") $*"
  timeout --kill-after=10 "$limit" bash "$s" "$@"
  code=$?
  if [ $code -ne 0 ]; then
    [ $code -eq 124 ] && echo "campaign: $(basename "$s") ran past ${limit} s"
    failed+=("$(basename "$s")")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "campaign: failed: ${failed[*]}"
  exit 1
fi
echo "campaign: all passed"
