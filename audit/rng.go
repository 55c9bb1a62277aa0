package audit

import "github.com/framesweep/framesweep/internal/splitmix"

// SplitMix64 is the generator behind every random choice of the audit (bootstrap resamples, cascade folds):
// internal/splitmix, documented there, so results do not change with the Go version and another
// implementation can reproduce them.
//
// Bounded draws use Lemire's multiply-high without a rejection step: Intn(n) = (Uint64() * n) >> 64. The
// bootstrap, which needs n draws per resample, takes two per output: (lo32 × n) >> 32, then (hi32 × n) >> 32.
type SplitMix64 struct{ splitmix.Source }

// NewSplitMix64 returns a generator whose state is seed.
func NewSplitMix64(seed uint64) *SplitMix64 { return &SplitMix64{splitmix.Source{State: seed}} }

// Intn returns a value in [0, n) by multiply-high; n must be > 0.
func (s *SplitMix64) Intn(n int) int {
	hi, _ := mul64(s.Uint64(), uint64(n))
	return int(hi)
}

// fnv64a hashes a scope name (FNV-1a, 64 bit) so each bootstrap scope gets its own stream.
func fnv64a(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

// streamSeed is the documented seed of resample b in a scope: seed XOR fnv64a(scope) XOR (b+1)·golden,
// passed once through SplitMix64 so neighbouring resamples are decorrelated.
func streamSeed(seed uint64, scope string, b int) uint64 {
	g := NewSplitMix64(seed ^ fnv64a(scope) ^ (uint64(b+1) * 0x9E3779B97F4A7C15))
	return g.Uint64()
}
