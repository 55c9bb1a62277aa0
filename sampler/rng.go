package sampler

// splitMix64 is the SplitMix64 generator (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014; constants as in Vigna's reference splitmix64.c). It is implemented here,
// not taken from math/rand, so that a seed gives the same frames with every Go version and can be
// reproduced in any language:
//
//	state += 0x9E3779B97F4A7C15
//	z = state
//	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
//	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
//	return z ^ (z >> 31)
type splitMix64 struct{ state uint64 }

func (s *splitMix64) next() uint64 {
	s.state += 0x9E3779B97F4A7C15
	z := s.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// below returns a uniform integer in [0, bound) by rejection: draws below 2^64 mod bound are
// discarded so every residue is equally likely. bound must be > 0.
func (s *splitMix64) below(bound uint64) uint64 {
	threshold := -bound % bound
	for {
		r := s.next()
		if r >= threshold {
			return r % bound
		}
	}
}
