package score

import (
	"math"
	"testing"
)

func TestTokenF1(t *testing.T) {
	cases := []struct {
		pred string
		refs []string
		want float64
	}{
		{"The cat sat.", []string{"a cat sat down"}, 0.8},
		{"", []string{""}, 1},
		{"the", []string{"a an"}, 1}, // both empty after dropping articles
		{"", []string{"x"}, 0},
		{"cat cat", []string{"cat"}, 2.0 / 3},
		{"red car", []string{"blue bus", "a red car!"}, 1},
		{"Dog", []string{"cat"}, 0},
	}
	for _, tc := range cases {
		if got := TokenF1(tc.pred, tc.refs...); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("TokenF1(%q, %q) = %v, want %v", tc.pred, tc.refs, got, tc.want)
		}
	}
}

func TestOptionLetter(t *testing.T) {
	for in, want := range map[string]string{"B": "B", "(C)": "C", "D.": "D", "A) dog": "A", "Answer: B": "B", "b": "B", "Bob": "", "": "", "42": "",
		// the English words A and I before a lower-case word are no letters
		"I cannot tell from these frames.": "", "A dog": "", "A. dog": "A", "I": "I", "D is right": "D"} {
		if got := OptionLetter(in); got != want {
			t.Errorf("OptionLetter(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChoiceAndConfidence(t *testing.T) {
	for _, c := range []struct {
		pred, gold string
		want       bool
	}{{"B", "B", true}, {" b", "B ", true}, {"", "A", false}, {"A", "B", false}, {"AB", "A", false}} {
		if got := Choice(c.pred, c.gold); got != c.want {
			t.Errorf("Choice(%q, %q) = %v", c.pred, c.gold, got)
		}
	}
	if Confidence(nil) != nil {
		t.Error("a confidence without probabilities")
	}
	if c := Confidence(map[string]float64{"A": 0.2, "B": 0.7, "C": 0.1}); c == nil || *c != 0.7 {
		t.Errorf("Confidence = %v, want 0.7", c)
	}
}
