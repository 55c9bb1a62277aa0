#!/usr/bin/env bash
# Submit a sharded framesweep sweep to Slurm: a job array of FRAMESWEEP_SHARDS tasks (one shard each,
# sweep-array.sbatch), then one merge + audit job (merge.sbatch) that starts when every task has
# succeeded. Prints the two job ids as JSON. Configuration (exported to both jobs):
#
#   FRAMESWEEP_GRID, FRAMESWEEP_ITEMS, FRAMESWEEP_RUNTIME   the sweep (as for framesweep sweep)
#   FRAMESWEEP_RUNS      shared storage for the RUNs: a directory every node sees, or a blob URL
#                        prefix (s3://bucket/study); shard i writes RUNS/shard-i, the merge RUNS/merged
#   FRAMESWEEP_SHARDS    N, the number of array tasks and shards
#   FRAMESWEEP           the framesweep binary (default: framesweep on PATH)
#   FRAMESWEEP_CACHE     optional --cache for every shard (a shared directory or blob URL)
#   FRAMESWEEP_URL_QUERY optional query appended to every RUN URL (?endpoint=…&use_path_style=true)
#   FRAMESWEEP_SWEEP_ARGS extra sweep flags (word-split), e.g. "--jobs 4 --template videomme"
#   FRAMESWEEP_RESULTS   where the merge job writes audit.json and report.html (default: here)
#   FRAMESWEEP_LOGS      where the jobs' output files go (default: here)
#   FRAMESWEEP_SBATCH_ARGS extra sbatch flags for both jobs (word-split): partition, account, time, gres
#   FRAMESWEEP_ARRAY_LIMIT at most this many tasks at once (--array=0-(N-1)%LIMIT)
#   FRAMESWEEP_MERGE_AFTER afterok (default) | afterany: afterany merges what finished even when a
#                        task failed (a sweep exits 1 when a pair failed; its RUN is still whole)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${FRAMESWEEP_GRID:?set FRAMESWEEP_GRID}" "${FRAMESWEEP_ITEMS:?set FRAMESWEEP_ITEMS}"
: "${FRAMESWEEP_RUNTIME:?set FRAMESWEEP_RUNTIME}" "${FRAMESWEEP_RUNS:?set FRAMESWEEP_RUNS}"
n="${FRAMESWEEP_SHARDS:?set FRAMESWEEP_SHARDS}"
case "$n" in '' | *[!0-9]* | 0) echo "submit.sh: FRAMESWEEP_SHARDS=$n: want a positive integer" >&2; exit 2 ;; esac
logs="${FRAMESWEEP_LOGS:-$PWD}"
export FRAMESWEEP_RESULTS="${FRAMESWEEP_RESULTS:-$PWD}"
mkdir -p "$logs" "$FRAMESWEEP_RESULTS"
# shellcheck disable=SC2206 # word splitting is the point
extra=(${FRAMESWEEP_SBATCH_ARGS:-})
range="0-$((n - 1))${FRAMESWEEP_ARRAY_LIMIT:+%$FRAMESWEEP_ARRAY_LIMIT}"
array="$(sbatch --parsable --export=ALL --array="$range" --output="$logs/framesweep-sweep-%A_%a.out" "${extra[@]}" "$here/sweep-array.sbatch")"
array="${array%%;*}" # --parsable prints "id;cluster" on a federation
merge="$(sbatch --parsable --export=ALL --dependency="${FRAMESWEEP_MERGE_AFTER:-afterok}:$array" --kill-on-invalid-dep=yes \
	--output="$logs/framesweep-merge-%j.out" "${extra[@]}" "$here/merge.sbatch")"
printf '{"array_job": "%s", "merge_job": "%s", "shards": %d}\n' "$array" "${merge%%;*}" "$n"
