package llm

import (
	"fmt"
	"math"
)

// Check reports what in r no record can hold: counts below 0, a time or rate that is not a finite
// number ≥ 0, probabilities outside [0,1] or of a letter that is not one of the request's options.
// A runtime's reply is checked before any of its fields is copied into a record (sweep), so a server
// that sends a bad count gets an error record for that pair rather than a record no reader accepts.
// The error wraps ErrBadResponse.
func (r *Response) Check(req *Request) error {
	bad := func(format string, a ...any) error {
		return Errorf("answer", "", ErrBadResponse, format, a...)
	}
	for _, n := range [...]struct {
		name string
		v    int
	}{{"prompt_tokens", r.PromptTokens}, {"completion_tokens", r.CompletionTokens}, {"visual_tokens", r.VisualTokens}} {
		if n.v < 0 {
			return bad("%s %d is negative", n.name, n.v)
		}
	}
	if !finiteNonNeg(r.LatencyS) || !finiteNonNeg(r.VideoFPS) {
		return bad("latency %v s, video fps %v: not a finite number ≥ 0", r.LatencyS, r.VideoFPS)
	}
	for i, t := range r.VideoTimestampsS {
		if !finiteNonNeg(t) {
			return bad("video timestamp %d is %v", i, t)
		}
	}
	if err := checkProbs(r.Probs, req); err != nil {
		return bad("%v", err)
	}
	if c := r.VisualCheck; c != nil && ((c.Expected != nil && *c.Expected < 0) || (c.Seen != nil && *c.Seen < 0) || c.Overhead < 0) {
		return bad("visual check has a negative count")
	}
	for i, g := range r.VisualGroups {
		if g.Tokens < 0 || g.GridH < 0 || g.GridW < 0 || g.PosStart < 0 || g.PosT < 0 {
			return bad("visual group %d has a negative count or position", i)
		}
	}
	return nil
}

// checkProbs: every probability is in [0,1] and belongs to an option letter of req.
func checkProbs(p map[string]float64, req *Request) error {
	if len(p) == 0 {
		return nil
	}
	letters := map[string]bool{}
	if req != nil {
		for _, l := range Letters(req.Options) {
			letters[l] = true
		}
	}
	for l, v := range p {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("probability of %q is %v (want [0,1])", l, v)
		}
		if !letters[l] {
			return fmt.Errorf("a probability for %q, which is no option's letter", l)
		}
	}
	return nil
}

func finiteNonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }
