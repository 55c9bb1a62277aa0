package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit/dataset"
)

// Pattern is one trajectory (correctness per config, in Result.Configs order restricted to multiple-choice
// configs: '1' correct, '0' wrong) and how many paired items follow it.
type Pattern struct {
	Pattern string `json:"pattern"`
	Count   int    `json:"count"`
	Label   string `json:"label"`
}

// patternTable holds, per distinct trajectory, the per-item predicates the metrics count. Every metric of
// METRICS.md's core table depends on an item only through its trajectory, so each scope is just a count
// per pattern, and a bootstrap resample only redraws those counts.
type patternTable struct {
	cfgs    []*dataset.Config
	byKey   map[string]int32
	keys    []string
	bits    []uint8 // P × C
	top     int     // index of the costliest config, -1 when not unique
	topNote string
	text    []int // text-only configs
	visual  []int
	levels  []int // cost level per config (-1 unknown)
	nLevels int   // distinct known costs
	nVisLev int   // distinct known costs of visual configs
	// unordered says why the configs have no order (some config's cost is unknown), "" when they
	// have one: every metric that needs an order is then undefined, never computed over a partial
	// or alphabetical order.
	unordered string

	oracle, conf, confVis, terminal, textOK, textOver, textAllVis, unstable []bool
}

func newPatternTable(cfgs []*dataset.Config, defPolicy string) *patternTable {
	pt := &patternTable{cfgs: cfgs, byKey: map[string]int32{}, top: -1}
	var costs []int64
	for j, c := range cfgs {
		if c.TextOnly {
			pt.text = append(pt.text, j)
		} else {
			pt.visual = append(pt.visual, j)
		}
		if c.Cost != nil {
			costs = append(costs, *c.Cost)
		}
	}
	sort.Slice(costs, func(a, b int) bool { return costs[a] < costs[b] })
	level := map[int64]int{}
	for _, x := range costs {
		if _, ok := level[x]; !ok {
			level[x] = len(level)
		}
	}
	pt.levels = make([]int, len(cfgs))
	var tops []int
	for j, c := range cfgs {
		pt.levels[j] = -1
		if c.Cost != nil {
			pt.levels[j] = level[*c.Cost]
			if pt.levels[j] == len(level)-1 {
				tops = append(tops, j)
			}
		}
	}
	switch {
	case len(tops) == 1:
		pt.top = tops[0]
	case len(tops) > 1:
		// Equal costs are incomparable; the main grid (the default policy through the raw pipeline, as
		// sampling recovery defines it: the cached pipeline is a protocol variable, not a budget)
		// breaks the tie when exactly one top config is in it.
		var main []int
		for _, j := range tops {
			if cfgs[j].Policy == defPolicy && cfgs[j].Pipeline != "cached" {
				main = append(main, j)
			}
		}
		if len(main) == 1 {
			pt.top = main[0]
		} else {
			pt.topNote = topTieNote(cfgs, tops, len(main), defPolicy)
		}
	}
	pt.nLevels = len(level)
	vis := map[int64]bool{}
	var unknown []string
	for _, c := range cfgs {
		if c.Cost == nil {
			unknown = append(unknown, c.ID)
		} else if !c.TextOnly {
			vis[*c.Cost] = true
		}
	}
	pt.nVisLev = len(vis)
	if len(unknown) > 0 {
		pt.unordered = fmt.Sprintf("configs %s have unknown cost (no frames in config_meta, not text-only): the configs have no order, so no metric that needs one is computed (give their frames: import with --frames)", strings.Join(unknown, ", "))
		pt.topNote = strings.TrimSpace(pt.topNote + fmt.Sprintf(" configs %s have no frames in config_meta: their cost is unknown, so visual confusion, terminal regression and the pairs and transitions are undefined (import with --frames)", strings.Join(unknown, ", ")))
		pt.top = -1
	}
	if len(level) < 2 && pt.top >= 0 {
		pt.top = -1 // a single cost level has nothing cheaper than the top
	}
	return pt
}

func (pt *patternTable) id(key []byte) int32 {
	if id, ok := pt.byKey[string(key)]; ok {
		return id
	}
	id := int32(len(pt.keys))
	s := string(key)
	pt.byKey[s] = id
	pt.keys = append(pt.keys, s)
	for _, b := range key {
		pt.bits = append(pt.bits, b-'0')
	}
	pt.classify(pt.bits[len(pt.bits)-len(key):])
	return id
}

// classify evaluates every per-item predicate of METRICS.md for one trajectory.
func (pt *patternTable) classify(c []uint8) {
	any, all := false, true
	for _, b := range c {
		any = any || b == 1
		all = all && b == 1
	}
	pt.oracle = append(pt.oracle, any)
	pt.unstable = append(pt.unstable, any && !all)
	// Confusion: some correct config strictly cheaper than some wrong one ⇔ min cost correct < max cost wrong.
	confusion := func(skipText bool) bool {
		if pt.unordered != "" {
			return false // undefined (pt.undefined), not computed over the known costs alone
		}
		minOK, maxBad := int64(-1), int64(-1)
		for j, b := range c {
			cf := pt.cfgs[j]
			if cf.Cost == nil || (skipText && cf.TextOnly) {
				continue
			}
			x := *cf.Cost
			if b == 1 && (minOK < 0 || x < minOK) {
				minOK = x
			}
			if b == 0 && x > maxBad {
				maxBad = x
			}
		}
		return minOK >= 0 && minOK < maxBad
	}
	pt.conf = append(pt.conf, confusion(false))
	pt.confVis = append(pt.confVis, confusion(true))
	term := false
	if pt.top >= 0 && c[pt.top] == 0 {
		for j, b := range c {
			if b == 1 && dataset.CostLess(pt.cfgs[j], pt.cfgs[pt.top]) {
				term = true
				break
			}
		}
	}
	pt.terminal = append(pt.terminal, term)
	textOK := false
	for _, j := range pt.text {
		textOK = textOK || c[j] == 1
	}
	someBad, allBad := false, len(pt.visual) > 0
	for _, j := range pt.visual {
		someBad = someBad || c[j] == 0
		allBad = allBad && c[j] == 0
	}
	pt.textOK = append(pt.textOK, textOK)
	pt.textOver = append(pt.textOver, textOK && someBad)
	pt.textAllVis = append(pt.textAllVis, textOK && allBad)
}

// topPatterns lists the most frequent trajectories (count desc, then pattern) and the count of the rest.
func (pt *patternTable) topPatterns(pats []int32, limit int) ([]Pattern, int) {
	counts := make([]int, len(pt.keys))
	for _, p := range pats {
		counts[p]++
	}
	ids := make([]int, 0, len(counts))
	for p, c := range counts {
		if c > 0 {
			ids = append(ids, p)
		}
	}
	sort.Slice(ids, func(a, b int) bool {
		if counts[ids[a]] != counts[ids[b]] {
			return counts[ids[a]] > counts[ids[b]]
		}
		return pt.keys[ids[a]] > pt.keys[ids[b]]
	})
	out := []Pattern{}
	other := 0
	for i, p := range ids {
		if i >= limit {
			other += counts[p]
			continue
		}
		label := "always correct"
		switch {
		case !pt.oracle[p]:
			label = "never correct"
		case pt.conf[p]:
			label = "confused"
		case pt.unstable[p]:
			label = "rescued"
		}
		out = append(out, Pattern{Pattern: pt.keys[p], Count: counts[p], Label: label})
	}
	return out, other
}

// topTieNote says why no config is the top one: the configs sharing the costliest cost, what they
// differ in (the factor that makes the tie, not always the sampling policy), and how many of them
// are in the main grid.
func topTieNote(cfgs []*dataset.Config, tops []int, inMain int, defPolicy string) string {
	var ids []string
	vals := map[string]map[string]bool{}
	var order []string
	for _, j := range tops {
		c := cfgs[j]
		ids = append(ids, c.ID)
		for _, f := range [][2]string{{"policy", c.Policy}, {"pipeline", c.Pipeline}, {"preset", c.Preset}, {"size", c.SizeKey()},
			{"frames", intStr(c.Frames)}, {"seed", int64Str(c.Seed)}} {
			if vals[f[0]] == nil {
				vals[f[0]] = map[string]bool{}
				order = append(order, f[0])
			}
			vals[f[0]][f[1]] = true
		}
	}
	var diff []string
	for _, f := range order {
		if len(vals[f]) > 1 {
			diff = append(diff, f)
		}
	}
	why := "their config_meta does not tell them apart"
	if len(diff) > 0 {
		why = "they differ in " + strings.Join(diff, ", ")
	}
	return fmt.Sprintf("terminal_regression_rate undefined: the costliest cost is shared by %s (%s), and %d of them are the main grid's (policy %q through the raw pipeline); exactly one must be",
		strings.Join(ids, ", "), why, inMain, defPolicy)
}

func int64Str(p *int64) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(*p)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
