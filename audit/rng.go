package audit

import "github.com/framesweep/framesweep/internal/splitmix"

// Every random choice of the audit comes from SplitMix64 (internal/splitmix, documented there), so
// results do not change with the Go version and another implementation can reproduce them. The
// bootstrap, which needs n draws per resample, takes two per output: (lo32 × n) >> 32, then
// (hi32 × n) >> 32 (patternTable.bootstrap).

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
	g := splitmix.Source{State: seed ^ fnv64a(scope) ^ (uint64(b+1) * 0x9E3779B97F4A7C15)}
	return g.Uint64()
}
