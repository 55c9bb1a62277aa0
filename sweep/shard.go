package sweep

import "github.com/framesweep/framesweep/internal/shard"

// Shard is this machine's part of a sweep: videos whose content digest falls in shard I of N
// (internal/shard, shared with `framesweep extract --shard`, which assigns every video to the same
// machine). The unit is a whole video (all its items and configs), so decode-once holds on every
// machine, and the assignment depends on the video's bytes only: stable across runs, paths and machines.
type Shard = shard.Shard
