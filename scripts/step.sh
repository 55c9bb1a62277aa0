#!/usr/bin/env bash
# step.sh NAME 'COMMAND': runs COMMAND (a bash command line) with scripts/env.sh sourced and prints
# "step NAME: W s wall, C s CPU, load L" when it ends, ok or not: the step table of make demo and make test.
set -eo pipefail
name=$1
# shellcheck disable=SC1091
source "$(dirname "$0")/env.sh"
start=$SECONDS
rc=0
bash -eo pipefail -c "$2" || rc=$?
# `times`' second line: the CPU time (user, system) of the children, as 1m2.345s (run here, not in a
# command substitution: a subshell has no children of its own).
t=$(mktemp)
times >"$t"
cpu=$(tail -1 "$t" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); t += p[1] * 60 + p[2] } printf "%.0f", t }')
rm -f "$t"
# The 1-minute load average as the step ends: on 2 cores, above 2 means other work (another step of
# make test's -j2, or someone else's) shared the cores, and the wall time says so.
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?")
echo "step $name: $((SECONDS - start)) s wall, $cpu s CPU, load $load$([ $rc = 0 ] || echo ", FAILED (exit $rc)")" >&2
exit $rc
