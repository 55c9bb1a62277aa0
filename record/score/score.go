package score

import (
	"math"
	"strings"
	"unicode"
)

// Choice reports whether a parsed option letter is the gold letter (case and surrounding space do not
// count): a sweep's correct for a multiple-choice item.
func Choice(prediction, answer string) bool {
	return strings.EqualFold(strings.TrimSpace(prediction), strings.TrimSpace(answer))
}

// Confidence is the largest of a runtime's option probabilities (METRICS.md's confidence), nil when
// the runtime gave none.
func Confidence(probs map[string]float64) *float64 {
	if len(probs) == 0 {
		return nil
	}
	best := 0.0
	for _, p := range probs {
		best = math.Max(best, p)
	}
	return &best
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

// OptionLetter extracts a single option letter from an answer such as "B", "(B)", "B.", "B) text",
// "Answer: B"; it returns "" when there is none, and for the English words "A" and "I" before a
// lower-case word ("A dog", "I cannot tell").
func OptionLetter(s string) string {
	if len(s) == 1 && s[0] >= 'A' && s[0] <= 'Z' {
		return s // the common case: a parsed choice
	}
	s = strings.TrimSpace(s)
	for _, p := range []string{"answer:", "the answer is", "best option:", "option"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			s = strings.TrimSpace(s[len(p):])
		}
	}
	s = strings.TrimLeft(s, "([ ")
	if s == "" {
		return ""
	}
	r := rune(s[0])
	if r < 'A' || r > 'Z' {
		if r >= 'a' && r <= 'z' && len(s) == 1 {
			return strings.ToUpper(s)
		}
		return ""
	}
	if len(s) == 1 {
		return s[:1]
	}
	next := rune(s[1])
	if unicode.IsSpace(next) && (r == 'A' || r == 'I') {
		if rest := strings.TrimLeftFunc(s[1:], unicode.IsSpace); rest != "" && rest[0] >= 'a' && rest[0] <= 'z' {
			return "" // the article or the pronoun: "A dog", "I cannot tell"
		}
	}
	if next == ')' || next == '.' || next == ':' || next == ',' || unicode.IsSpace(next) {
		return s[:1]
	}
	return ""
}
