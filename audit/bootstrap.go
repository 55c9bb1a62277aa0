package audit

import (
	"runtime"
	"sync"

	"github.com/framesweep/framesweep/internal/splitmix"
)

// BootstrapInfo records how the intervals were drawn.
type BootstrapInfo struct {
	Seed      uint64 `json:"seed"`
	Resamples int    `json:"resamples"`
	PRNG      string `json:"prng"`
	Interval  string `json:"interval"`
}

// bootstrap draws resamples of the scope's items (with replacement) and returns the 95% percentile
// intervals of oracle_headroom and visual_confusion_rate. Resamples run in parallel; each has its own
// documented stream (streamSeed), so the result does not depend on the number of workers. It needs n
// draws per resample and takes two per SplitMix64 output: (lo32 × n) >> 32, then (hi32 × n) >> 32.
func (pt *patternTable) bootstrap(pats []int32, seed uint64, scope string, B int) (*Interval, *Interval) {
	C, P, n := len(pt.cfgs), len(pt.keys), len(pats)
	head := make([]float64, B)
	conf := make([]float64, B)
	workers := min(runtime.GOMAXPROCS(0), B)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			counts := make([]int, P)
			acc := make([]int, C)
			for b := w; b < B; b += workers {
				clear(counts)
				g := splitmix.Source{State: streamSeed(seed, scope, b)}
				// Two draws per 64-bit output: index = (half × n) >> 32, low half first (bootstrap's doc).
				n64 := uint64(n)
				j := 0
				for ; j+1 < n; j += 2 {
					x := g.Uint64()
					counts[pats[(x&0xFFFFFFFF*n64)>>32]]++
					counts[pats[(x>>32*n64)>>32]]++
				}
				if j < n {
					counts[pats[(g.Uint64()&0xFFFFFFFF*n64)>>32]]++
				}
				clear(acc)
				oracle, cf := 0, 0
				for p, cnt := range counts {
					if cnt == 0 {
						continue
					}
					for j := 0; j < C; j++ {
						acc[j] += cnt * int(pt.bits[p*C+j])
					}
					oracle += cnt * b2i(pt.oracle[p])
					cf += cnt * b2i(pt.conf[p])
				}
				best := 0
				for _, a := range acc {
					best = max(best, a)
				}
				head[b] = 100 * float64(oracle-best) / float64(n)
				conf[b] = 100 * float64(cf) / float64(n)
			}
		}(w)
	}
	wg.Wait()
	h, c := sortedCopy(head), sortedCopy(conf)
	return &Interval{Percentile(h, 0.025), Percentile(h, 0.975)}, &Interval{Percentile(c, 0.025), Percentile(c, 0.975)}
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
	g := splitmix.Source{State: seed ^ fnv64a(scope) ^ (uint64(b+1) * 0x9E3779B97F4A7C15)}
	return g.Uint64()
}
