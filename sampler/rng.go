package sampler

import "github.com/framesweep/framesweep/internal/splitmix"

// splitMix64 is the SplitMix64 generator of internal/splitmix (documented there), so a seed gives the
// same frames with every Go version and can be reproduced in any language.
type splitMix64 struct{ state uint64 }

func (s *splitMix64) next() uint64 {
	src := splitmix.Source{State: s.state}
	v := src.Uint64()
	s.state = src.State
	return v
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
