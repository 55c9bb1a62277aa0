package audit

import (
	"math"
	"sort"
)

// McNemarExact is the exact two-sided binomial test of b discordant pairs one way against c the other:
// p = min(1, 2·P(X ≤ min(b,c))) with X ~ Binomial(b+c, 1/2); p = 1 when b+c = 0.
func McNemarExact(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	if 2*k+1 >= n {
		return 1 // P(X ≤ k) ≥ 1/2 exactly; saves the sum's rounding (0.99999…)
	}
	// Sum in log space: lgamma keeps C(n,i)/2^n finite for n in the hundreds of thousands.
	lnHalfN := float64(n) * math.Ln2
	lgN, _ := math.Lgamma(float64(n + 1))
	var sum float64
	for i := 0; i <= k; i++ {
		lgI, _ := math.Lgamma(float64(i + 1))
		lgNI, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lgN - lgI - lgNI - lnHalfN)
	}
	return math.Min(1, 2*sum)
}

// Percentile is the type-7 (linear interpolation, numpy's default) q-quantile of sorted values.
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := q * float64(len(sorted)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

func sortedCopy(v []float64) []float64 {
	c := append([]float64(nil), v...)
	sort.Float64s(c)
	return c
}
