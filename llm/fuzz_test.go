package llm

import (
	"math"
	"slices"
	"testing"
)

// FuzzExtract: the parsers never panic and only ever return "" or one of the offered letters.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{"A", "(B) x", "The best answer is C", ")", "According", "Best Option: (D)", "\xff)"} {
		f.Add(s)
	}
	letters := []string{"A", "B", "C", "D"}
	f.Fuzz(func(t *testing.T, s string) {
		if got := ExtractVideoMME(s); got != "" && !slices.Contains(letters, got) {
			t.Fatalf("videomme %q -> %q", s, got)
		}
		if got := ExtractMLVU(s, letters); got != "" && !slices.Contains(letters, got) {
			t.Fatalf("mlvu %q -> %q", s, got)
		}
		if got := ExtractGeneric(s, letters); got != "" && !slices.Contains(letters, got) {
			t.Fatalf("generic %q -> %q", s, got)
		}
	})
}

// FuzzLetterProbs: whatever the scores, the result is nil or a distribution over the letters.
func FuzzLetterProbs(f *testing.F) {
	f.Add(1.0, -2.0, 0.5, true)
	f.Add(math.Inf(1), math.NaN(), math.Inf(-1), true)
	f.Add(math.NaN(), math.NaN(), math.NaN(), false)
	f.Fuzz(func(t *testing.T, a, b, c float64, withC bool) {
		scores := map[string][]float64{"A": {a}, "B": {b, a}}
		if withC {
			scores["C"] = []float64{c}
		}
		p := LetterProbs(scores, []string{"A", "B", "C"})
		if p == nil {
			return
		}
		var sum float64
		for _, v := range p {
			if v < 0 || v > 1 || math.IsNaN(v) {
				t.Fatalf("%v", p)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("sum %v: %v", sum, p)
		}
	})
}
