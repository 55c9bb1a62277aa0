package audit

import (
	"math"
	"sort"
	"strings"
	"unicode"
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

// TokenF1 is METRICS.md's open-ended score: lower-case, drop punctuation and the articles a/an/the, split on
// white space, F1 of the token multisets; with several references the maximum; empty vs empty is 1.
func TokenF1(prediction string, references ...string) float64 {
	if len(references) == 0 {
		references = []string{""}
	}
	p := f1Tokens(prediction)
	best := 0.0
	for _, r := range references {
		best = math.Max(best, tokenF1(p, f1Tokens(r)))
	}
	return best
}

func f1Tokens(s string) []string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSymbol(r) {
			return -1
		}
		return r
	}, s)
	var out []string
	for _, t := range strings.Fields(s) {
		if t == "a" || t == "an" || t == "the" {
			continue
		}
		out = append(out, t)
	}
	return out
}

func tokenF1(p, r []string) float64 {
	if len(p) == 0 && len(r) == 0 {
		return 1
	}
	if len(p) == 0 || len(r) == 0 {
		return 0
	}
	counts := make(map[string]int, len(r))
	for _, t := range r {
		counts[t]++
	}
	common := 0
	for _, t := range p {
		if counts[t] > 0 {
			counts[t]--
			common++
		}
	}
	if common == 0 {
		return 0
	}
	prec := float64(common) / float64(len(p))
	rec := float64(common) / float64(len(r))
	return 2 * prec * rec / (prec + rec)
}

func sortedCopy(v []float64) []float64 {
	c := append([]float64(nil), v...)
	sort.Float64s(c)
	return c
}
