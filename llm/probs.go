package llm

import (
	"math"
	"strings"
)

// TokenLetter returns the option letter a token's text spells: the capital letter alone, after
// whitespace or "(", and/or before ".", ")" or ":" ("A", " A", "(A", "A.", " A)"); "" otherwise.
func TokenLetter(text string) string {
	t := strings.TrimLeft(text, " \t\n")
	t = strings.TrimPrefix(t, "(")
	t = strings.TrimRight(t, ".):")
	if len(t) == 1 && t[0] >= 'A' && t[0] <= 'Z' && len(text) <= 4 {
		return t
	}
	return ""
}

// LetterProbs turns per-letter scores into probabilities over the options. scores[letter] holds the
// log-domain scores (logits or logprobs) of every token variant of that letter ("A", " A"); variants are
// aggregated by log-sum-exp, i.e. their probabilities add. Letters with no score get probability 0
// before renormalisation. It returns nil when no option letter has a score.
func LetterProbs(scores map[string][]float64, letters []string) map[string]float64 {
	agg := make([]float64, len(letters))
	max := math.Inf(-1)
	for i, l := range letters {
		agg[i] = logSumExp(scores[l])
		if math.IsNaN(agg[i]) {
			agg[i] = math.Inf(-1) // a NaN score carries no evidence
		}
		if math.IsInf(agg[i], 1) {
			agg[i] = math.MaxFloat64 // +Inf: these letters share all the mass
		}
		if agg[i] > max {
			max = agg[i]
		}
	}
	if math.IsInf(max, -1) {
		return nil
	}
	var sum float64
	p := make([]float64, len(letters))
	for i := range agg {
		if !math.IsInf(agg[i], -1) {
			p[i] = math.Exp(agg[i] - max)
			sum += p[i]
		}
	}
	out := make(map[string]float64, len(letters))
	for i, l := range letters {
		out[l] = p[i] / sum
	}
	return out
}

func logSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		if math.IsInf(x, 1) {
			return x
		}
		if x > m {
			m = x
		}
	}
	if math.IsInf(m, -1) {
		return m
	}
	var s float64
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}
