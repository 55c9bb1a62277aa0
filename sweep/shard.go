package sweep

import (
	"encoding/hex"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Shard is this machine's part of a sweep: videos whose content digest falls in shard I of N. The
// unit is a whole video (all its items and configs), so decode-once holds on every machine, and the
// assignment depends on the video's bytes only: stable across runs, paths and machines.
type Shard struct{ I, N int }

// ParseShard reads "i/N" with 0 ≤ i < N.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, e1 := strconv.Atoi(a)
	n, e2 := strconv.Atoi(b)
	if !ok || e1 != nil || e2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/N with 0 ≤ i < N", s)
	}
	return Shard{I: i, N: n}, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// Of is the shard a hex sha256 digest belongs to among n: its first 8 bytes as a big-endian integer,
// reduced without modulo bias worth speaking of (multiply-high, as a uniform 64-bit hash allows).
func Of(digest string, n int) int {
	if n <= 1 {
		return 0
	}
	b, err := hex.DecodeString(digest)
	var x uint64
	if err == nil && len(b) >= 8 {
		for _, c := range b[:8] {
			x = x<<8 | uint64(c)
		}
	}
	hi, _ := bits.Mul64(x, uint64(n))
	return int(hi)
}

// Owns reports whether the video with this digest is this shard's (every video when N ≤ 1).
func (s Shard) Owns(digest string) bool { return s.N <= 1 || Of(digest, s.N) == s.I }
