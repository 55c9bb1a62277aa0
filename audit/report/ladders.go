package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/dataset"
)

// ladder is one curve of the accuracy charts: the visual configs that share everything but their
// frame count (sampling, size, pipeline), by frames. The text-only configs start every ladder. A
// step from one ladder to another (a resolution change) is no step of any curve: the charts and the
// Markdown tables count rescued and harmed items only along a ladder.
type ladder struct {
	name string            // what tells it from the other ladders ("112² cached"); its whole protocol when alone
	cfgs []*dataset.Config // frames ascending
}

// curves are a grid's configs arranged for the accuracy charts: the text-only configs, the ladders,
// the visual configs of unknown frames (on no ladder) and every ladder's frame counts.
type curves struct {
	text    []*dataset.Config
	ladders []*ladder
	loose   []*dataset.Config
	frames  []int // distinct, ascending: the x axis after "text"
}

// ladderParts are a config's protocol factors: sampling (a preset names its own rule), size, pipeline.
func ladderParts(c *dataset.Config) [3]string {
	s := c.Policy
	if c.Preset != "" {
		s = c.Preset
	}
	if c.Seed != nil {
		s += fmt.Sprintf(" s%d", *c.Seed)
	}
	size := ""
	switch {
	case c.Width != nil && c.Height != nil && *c.Width == *c.Height:
		size = fmt.Sprintf("%d²", *c.Width)
	case c.Width != nil && c.Height != nil:
		size = fmt.Sprintf("%d×%d", *c.Width, *c.Height)
	case c.MaxPixels != nil:
		size = fmt.Sprintf("≤%s px", humanCost(float64(*c.MaxPixels)))
	}
	return [3]string{s, size, c.Pipeline}
}

// curvesOf arranges cs (display order) into ladders, in the order of their first config. Two
// configs of one protocol and frame count (they differ in what a config's metadata does not say)
// go to separate ladders, numbered.
func curvesOf(cs []*dataset.Config) *curves {
	cv := &curves{}
	type key struct {
		parts [3]string
		n     int
	}
	byKey := map[key]*ladder{}
	parts := map[*ladder][3]string{}
	seen := map[int]bool{}
	for _, c := range cs {
		switch {
		case c.TextOnly:
			cv.text = append(cv.text, c)
			continue
		case c.Frames == nil || *c.Frames <= 0:
			cv.loose = append(cv.loose, c)
			continue
		}
		k := key{parts: ladderParts(c)}
		for byKey[k] != nil && hasFrames(byKey[k], *c.Frames) {
			k.n++
		}
		l := byKey[k]
		if l == nil {
			l = &ladder{}
			if k.n > 0 {
				l.name = fmt.Sprintf("#%d", k.n+1)
			}
			byKey[k], parts[l] = l, k.parts
			cv.ladders = append(cv.ladders, l)
		}
		l.cfgs = append(l.cfgs, c)
		if !seen[*c.Frames] {
			seen[*c.Frames] = true
			cv.frames = append(cv.frames, *c.Frames)
		}
	}
	sort.Ints(cv.frames)
	for _, l := range cv.ladders {
		sort.SliceStable(l.cfgs, func(a, b int) bool { return *l.cfgs[a].Frames < *l.cfgs[b].Frames })
	}
	nameLadders(cv.ladders, parts)
	return cv
}

func hasFrames(l *ladder, n int) bool {
	for _, c := range l.cfgs {
		if *c.Frames == n {
			return true
		}
	}
	return false
}

// nameLadders names each ladder by the factors that vary across the ladders (all of its factors
// when it is the only one), after any number curvesOf gave it.
func nameLadders(ls []*ladder, parts map[*ladder][3]string) {
	var vary [3]bool
	for f := range vary {
		for _, l := range ls {
			vary[f] = vary[f] || parts[l][f] != parts[ls[0]][f]
		}
	}
	for _, l := range ls {
		var ns []string
		for f, p := range parts[l] {
			if p != "" && (vary[f] || len(ls) == 1) {
				ns = append(ns, p)
			}
		}
		if l.name != "" {
			ns = append(ns, l.name)
		}
		l.name = strings.Join(ns, " ")
		if l.name == "" {
			l.name = "visual"
		}
	}
}

// xIndex places the text-only configs at 0 (when there are any) and the frame counts after it.
func (cv *curves) xIndex(c *dataset.Config) int {
	off := 0
	if len(cv.text) > 0 {
		off = 1
	}
	if c.TextOnly {
		return 0
	}
	return off + sort.SearchInts(cv.frames, *c.Frames)
}

// xLabels are the x axis: "text", then "8f", "16f" …
func (cv *curves) xLabels() []string {
	var out []string
	if len(cv.text) > 0 {
		out = append(out, "text")
	}
	for _, n := range cv.frames {
		out = append(out, fmt.Sprintf("%df", n))
	}
	return out
}

// steps are a ladder's configs with the text-only config before them (the one text-only config: with
// several, the ladder starts at its first frame count, as no one text config is its start).
func (cv *curves) steps(l *ladder) []*dataset.Config {
	if len(cv.text) == 1 {
		return append([]*dataset.Config{cv.text[0]}, l.cfgs...)
	}
	return l.cfgs
}

// pairOf is the audit's pair from a to b (cheaper to costlier), nil when it has none (equal or
// unknown costs: no order).
func pairOf(r *audit.Result, a, b string) *audit.Pair {
	for i := range r.Pairs {
		if p := &r.Pairs[i]; p.From == a && p.To == b {
			return p
		}
	}
	return nil
}

// looseNote says which configs are on no curve (their frames are unknown), "" when none is.
func (cv *curves) looseNote() string {
	if len(cv.loose) == 0 {
		return ""
	}
	var ids []string
	for _, c := range cv.loose {
		ids = append(ids, c.ID)
	}
	return fmt.Sprintf("Not on the curves (their frame counts are unknown): %s. Their accuracy is in the oracle chart and the tables.", strings.Join(ids, ", "))
}

// flowLadder is the ladder the flow diagram follows: the one with the most budgets (the first of
// those), the text-only config first, with the transitions between its steps from the audit's pairs
// (the items that stay correct or wrong follow from the accuracies). Nil when a step has no pair
// (no order): no diagram rather than flows the audit does not count.
func flowLadder(r *audit.Result) ([]*dataset.Config, []audit.Transition) {
	cv := curvesOf(mcConfigs(r))
	var best *ladder
	for _, l := range cv.ladders {
		if best == nil || len(l.cfgs) > len(best.cfgs) {
			best = l
		}
	}
	if best == nil {
		return nil, nil
	}
	steps := cv.steps(best)
	var out []audit.Transition
	for k := 1; k < len(steps); k++ {
		p := pairOf(r, steps[k-1].ID, steps[k].ID)
		if p == nil {
			return nil, nil
		}
		ok := int(math.Round(r.Accuracy[p.From] * float64(r.Items) / 100))
		out = append(out, audit.Transition{From: p.From, To: p.To, Ordered: true, Rescued: p.Rescued, Harmed: p.Harmed,
			BothCorrect: ok - p.Harmed, BothWrong: r.Items - ok - p.Rescued})
	}
	return steps, out
}

// flowLead names the ladder the flow diagram follows when there are several.
func flowLead(r *audit.Result) string {
	cv := curvesOf(mcConfigs(r))
	if len(cv.ladders) < 2 {
		return ""
	}
	steps, _ := flowLadder(r)
	if len(steps) == 0 {
		return ""
	}
	return fmt.Sprintf(" Along the ladder with the most budgets (%s); the other ladders' steps are the bars under the accuracy curves.", ladderOf(cv, steps[len(steps)-1]))
}

// ladderOf names the ladder c is on.
func ladderOf(cv *curves, c *dataset.Config) string {
	for _, l := range cv.ladders {
		for _, x := range l.cfgs {
			if x == c {
				return l.name
			}
		}
	}
	return ""
}
