// Package slurm holds framesweep's Slurm job scripts: submit.sh submits sweep-array.sbatch as a job
// array (one shard per task, --shard env) and merge.sbatch as a job that depends on it (merge, then
// audit). Its test runs them on a single-node Slurm it starts itself (docs/scale-out.md).
package slurm
