package sweep

import "github.com/framesweep/framesweep/internal/shard"

// Shard is this machine's part of a sweep: videos whose content digest falls in shard I of N
// (internal/shard, shared with `framesweep extract --shard`, which assigns every video to the same
// machine). The unit is a whole video (all its items and configs), so decode-once holds on every
// machine, and the assignment depends on the video's bytes only: stable across runs, paths and machines.
type Shard = shard.Shard

// ParseShard reads "i/N" with 0 ≤ i < N.
func ParseShard(s string) (Shard, error) { return shard.Parse(s) }

// Of is the shard a hex sha256 digest belongs to among n: its first 8 bytes as a big-endian integer,
// scaled to n by a multiply-high.
func Of(digest string, n int) int { return shard.Of(digest, n) }
