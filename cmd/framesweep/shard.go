package main

import (
	"fmt"
	"os"

	"github.com/framesweep/framesweep/internal/shard"
)

const shardFlagHelp = "i/N: only the videos of shard i of N (by content digest); env: the shard a Slurm job array or a Kubernetes Indexed Job gives this task (docs/scale-out.md)"

// parseShard reads --shard: "" (every video), "i/N", or "env" (SLURM_ARRAY_TASK_ID/…_COUNT, or
// JOB_COMPLETION_INDEX with FRAMESWEEP_SHARD_COUNT). The scheduler's variables are read only when asked
// for, so a sweep inside an unrelated job array never shards itself by surprise.
func parseShard(s string) (shard.Shard, error) {
	switch s {
	case "":
		return shard.Shard{}, nil
	case "env":
		sh, _, err := shard.FromEnv(os.Getenv)
		if err != nil {
			return sh, fmt.Errorf("env: %w", err)
		}
		return sh, nil
	}
	return shard.Parse(s)
}
