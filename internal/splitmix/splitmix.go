// Package splitmix is the SplitMix64 generator (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014; constants as in Vigna's reference splitmix64.c) behind every seeded choice of
// framesweep: random frame plans (sampler) and bootstrap resamples and cascade folds (audit). It is ours,
// not math/rand, so a seed gives the same numbers with every Go version and in any other language:
//
//	state += 0x9E3779B97F4A7C15
//	z = state
//	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
//	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
//	return z ^ (z >> 31)
//
// Bounded draws: Intn is multiply-high without rejection, the rule of the audit's cascade folds and
// of the synthetic demo records (record/synth); sampler draws frames by rejection (sampler/rng.go).
package splitmix

import "math/bits"

// Source is a SplitMix64 generator; the zero value has state 0.
type Source struct{ State uint64 }

// Uint64 advances the state and returns the next value.
func (s *Source) Uint64() uint64 {
	s.State += 0x9E3779B97F4A7C15
	z := s.State
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// Intn returns a value in [0, n) by multiply-high, without a rejection step: (Uint64() × n) >> 64.
// n must be > 0.
func (s *Source) Intn(n int) int {
	hi, _ := bits.Mul64(s.Uint64(), uint64(n))
	return int(hi)
}
