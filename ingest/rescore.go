package ingest

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/record"
)

// Rescoring by option text is this package's own verdict, never the harness's: it runs only with
// Options.Rescore "text", and the import reports how many verdicts it changed.

// rescoreInput is what one multiple-choice record needs to be rescored.
type rescoreInput struct {
	response string   // the model's raw answer
	gold     string   // the gold answer: a letter, an option text, or (index) a 0-based option index
	index    bool     // the task's target is a 0-based option index
	cands    []string // option texts, with or without "A. " prefixes
}

// verdict is the rescored verdict and whether a gold answer was there to score against.
func (in rescoreInput) verdict() (bool, bool) {
	gold := strings.TrimSpace(in.gold)
	if in.index {
		if l := letterOfIndex(gold); l != "" {
			gold = l
		}
	}
	if gold == "" {
		return false, false
	}
	return sameAnswer(in.response, gold, in.cands), true
}

// rescore applies the verdicts to the multiple-choice records. harness says the records carry the
// harness's verdicts (counted as changes); otherwise the records get their first verdict here.
func rescore(recs []record.Record, ins []rescoreInput, harness bool) *RescoreCount {
	c := &RescoreCount{}
	for i := range recs {
		rescoreOne(&recs[i], ins[i], harness, c)
	}
	return c
}

// rescoreOne applies one record's verdict, counted in c.
func rescoreOne(r *record.Record, in rescoreInput, harness bool, c *RescoreCount) {
	if r.Score != nil {
		return
	}
	c.Records++
	v, ok := in.verdict()
	if !ok {
		c.NoOptions++
		if r.Correct == nil {
			f := false
			r.Correct = &f
		}
		return
	}
	// This package's verdict: unparsed when the response names neither a letter nor an option's text.
	ours := func() { r.Correct, r.Unparsed = &v, !v && choice(in.response, in.cands) == "" }
	if !harness || r.Correct == nil {
		c.Unscored++
		ours()
		return
	}
	if v != *r.Correct {
		c.Changed++
		if v {
			c.NowCorrect++
		} else {
			c.NowWrong++
		}
		ours()
		if r.Harness != nil {
			h := *r.Harness
			h.Flipped = true
			r.Harness = &h
		}
	}
}

// optionLine matches an option in a prompt: "(A) text", "A. text", "A) text", "A: text".
var optionLine = regexp.MustCompile(`^\s*\(?([A-Z])[.):]\s*(\S.*?)\s*$`)

// candidatesOf finds the options of a sample: the doc's option fields (candidates, options, option,
// option0…, a0…) or, when the doc was popped from the log (lmms-eval v0.7), the "(A) …" lines of the
// prompt.
func candidatesOf(doc map[string]any, prompt string) []string {
	if doc != nil {
		for _, k := range []string{"candidates", "options", "option"} {
			switch v := doc[k].(type) {
			case []any:
				if c := stringsOf(v); len(c) > 0 {
					return c
				}
			case string:
				if c := promptOptions(v); len(c) > 0 {
					return c // Video-MME-v2: "A. …\nB. …"
				}
			}
		}
		for _, p := range []string{"option", "a"} {
			var c []string
			for i := 0; i < 26; i++ {
				v, ok := doc[p+strconv.Itoa(i)]
				if !ok {
					break
				}
				s := scalarString(v)
				if s == "N/A" { // LongVideoBench pads to five options
					break
				}
				c = append(c, s)
			}
			if len(c) > 0 {
				return c
			}
		}
	}
	return promptOptions(prompt)
}

// promptOptions collects consecutive option lines A, B, C… from a prompt; the texts keep their letters.
func promptOptions(prompt string) []string {
	var out []string
	for _, line := range strings.Split(prompt, "\n") {
		m := optionLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		want := byte('A' + len(out))
		switch {
		case m[1][0] == want:
			out = append(out, m[1]+". "+m[2])
		case m[1][0] == 'A': // a new list starts (an example block before the real options)
			out = append(out[:0], "A. "+m[2])
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// promptOf is the prompt of a sample: v0.7's "input", else the first argument.
func promptOf(s map[string]any) string {
	if p, ok := s["input"].(string); ok {
		return p
	}
	if a, ok := s["arguments"].([]any); ok && len(a) > 0 {
		if first, ok := firstString(a[0]); ok {
			return first
		}
	}
	return ""
}
