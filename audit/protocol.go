package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit/dataset"
)

// Protocol factors: two budget ladders that differ in one of them form a protocol pair.
const (
	FactorPipeline   = "pipeline"   // raw vs cached inputs
	FactorSampling   = "sampling"   // sampling policy, preset or seed
	FactorResolution = "resolution" // frame size at the same budgets
)

// ProtocolPair compares two protocols — budget ladders of visual multiple-choice configs that differ
// in one factor only — over the same paired items and the same budgets (frame counts both have),
// each ladder with the text-only configs below it: the population metrics of each side, and how far
// the item labels agree (docs/audit.md "Protocol agreement"). Robust structure with
// protocol-sensitive labels shows as close metrics with a low κ.
type ProtocolPair struct {
	Factor   string          `json:"factor"` // FactorPipeline, FactorSampling or FactorResolution
	A        string          `json:"a"`      // the protocol, e.g. "uniform 448x448 raw"
	B        string          `json:"b"`
	Budgets  []int           `json:"budgets"` // the frame counts compared
	ConfigsA []string        `json:"configs_a"`
	ConfigsB []string        `json:"configs_b"`
	Text     []string        `json:"text_configs"` // text-only configs, part of both grids
	Items    int             `json:"items"`
	MetricsA ProtocolMetrics `json:"metrics_a"`
	MetricsB ProtocolMetrics `json:"metrics_b"`
	// Confused is the agreement of the visual confusion tag between the two grids.
	Confused LabelAgreement `json:"confused"`
	// Flips are the items whose verdict differs between the two configs of each budget.
	Flips    []BudgetFlip `json:"flips"`
	FlipRate *float64     `json:"flip_rate"` // % of (item, budget) verdicts that differ
}

// ProtocolMetrics are one grid's population metrics (METRICS.md core table).
type ProtocolMetrics struct {
	BestFixed           *float64 `json:"best_fixed"`
	BestFixedConfig     string   `json:"best_fixed_config,omitempty"`
	OracleAccuracy      *float64 `json:"oracle_accuracy"`
	OracleHeadroom      *float64 `json:"oracle_headroom"`
	VisualConfusionRate *float64 `json:"visual_confusion_rate"`
	TextOverwriteRate   *float64 `json:"text_overwrite_rate"`
	UnstableRate        *float64 `json:"unstable_rate"`
}

// BudgetFlip counts the verdicts that differ between the two protocols' configs of one budget.
type BudgetFlip struct {
	Frames int      `json:"frames"`
	A      string   `json:"a"`
	B      string   `json:"b"`
	Flips  int      `json:"flips"`
	Rate   *float64 `json:"rate"`   // % of items
	AOnly  int      `json:"a_only"` // correct under A only
	BOnly  int      `json:"b_only"`
}

// ladder is one protocol: its visual configs by frame count (positions in mcView.cfgs).
type ladder struct {
	sampling, size, pipeline string
	byFrames                 map[int]int
	ambiguous                bool // two configs share every factor and the budget
}

func (l *ladder) name() string {
	parts := []string{}
	for _, p := range []string{l.sampling, l.size, l.pipeline} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "(unnamed)"
	}
	return strings.Join(parts, " ")
}

// samplingKey is the sampling part of a config's protocol: policy, preset and seed.
func samplingKey(c *dataset.Config) string {
	s := c.Policy
	if c.Preset != "" {
		s = strings.TrimSpace(s + " " + c.Preset)
	}
	if c.Seed != nil {
		s += fmt.Sprintf(" seed=%d", *c.Seed)
	}
	return s
}

// ladders groups the visual configs with a known budget into protocols.
func ladders(v *mcView) []*ladder {
	byKey := map[string]*ladder{}
	var out []*ladder
	for j, c := range v.cfgs {
		if c.TextOnly || c.Frames == nil || *c.Frames <= 0 {
			continue
		}
		l := &ladder{sampling: samplingKey(c), size: c.SizeKey(), pipeline: c.Pipeline}
		key := l.sampling + "\x00" + l.size + "\x00" + l.pipeline
		if have := byKey[key]; have != nil {
			l = have
		} else {
			l.byFrames = map[int]int{}
			byKey[key] = l
			out = append(out, l)
		}
		if _, dup := l.byFrames[*c.Frames]; dup {
			l.ambiguous = true
		}
		l.byFrames[*c.Frames] = j
	}
	return out
}

// differsIn names the one factor two ladders differ in ("" when none or several).
func differsIn(a, b *ladder) string {
	var f []string
	if a.sampling != b.sampling {
		f = append(f, FactorSampling)
	}
	if a.size != b.size {
		f = append(f, FactorResolution)
	}
	if a.pipeline != b.pipeline {
		f = append(f, FactorPipeline)
	}
	if len(f) != 1 {
		return ""
	}
	return f[0]
}

// protocolAgreement compares every pair of ladders that differ in one factor and share a budget.
func protocolAgreement(v *mcView, defPolicy string) []ProtocolPair {
	out := []ProtocolPair{}
	if len(v.paired) == 0 {
		return out
	}
	ls := ladders(v)
	var text []int
	for j, c := range v.cfgs {
		if c.TextOnly {
			text = append(text, j)
		}
	}
	for x := 0; x < len(ls); x++ {
		for y := x + 1; y < len(ls); y++ {
			a, b := ls[x], ls[y]
			f := differsIn(a, b)
			if f == "" || a.ambiguous || b.ambiguous {
				continue
			}
			var budgets []int
			for n := range a.byFrames {
				if _, ok := b.byFrames[n]; ok {
					budgets = append(budgets, n)
				}
			}
			if len(budgets) == 0 {
				continue
			}
			sort.Ints(budgets)
			out = append(out, comparePair(v, defPolicy, f, a, b, budgets, text))
		}
	}
	return out
}

// comparePair computes one protocol pair over the paired items.
func comparePair(v *mcView, defPolicy, factor string, a, b *ladder, budgets, text []int) ProtocolPair {
	p := ProtocolPair{Factor: factor, A: a.name(), B: b.name(), Budgets: budgets, Items: len(v.paired), Flips: []BudgetFlip{}}
	ja, jb := append([]int{}, text...), append([]int{}, text...)
	for _, j := range text {
		p.Text = append(p.Text, v.cfgs[j].ID)
	}
	totalFlips := 0
	for _, n := range budgets {
		ka, kb := a.byFrames[n], b.byFrames[n]
		ja, jb = append(ja, ka), append(jb, kb)
		p.ConfigsA, p.ConfigsB = append(p.ConfigsA, v.cfgs[ka].ID), append(p.ConfigsB, v.cfgs[kb].ID)
		bf := BudgetFlip{Frames: n, A: v.cfgs[ka].ID, B: v.cfgs[kb].ID}
		for pi := range v.paired {
			ca, cb := v.correct(pi, ka), v.correct(pi, kb)
			bf.AOnly += b2i(ca && !cb)
			bf.BOnly += b2i(cb && !ca)
		}
		bf.Flips = bf.AOnly + bf.BOnly
		bf.Rate = pct(bf.Flips, len(v.paired))
		totalFlips += bf.Flips
		p.Flips = append(p.Flips, bf)
	}
	p.FlipRate = pct(totalFlips, len(v.paired)*len(budgets))
	ma, confA := subGrid(v, ja, defPolicy)
	mb, confB := subGrid(v, jb, defPolicy)
	p.MetricsA, p.MetricsB = ma, mb
	p.Confused = labelAgreement(confA, confB)
	return p
}

// subGrid computes the core metrics of the grid made of v's configs js over v's paired items, and
// each item's visual confusion tag in it.
func subGrid(v *mcView, js []int, defPolicy string) (ProtocolMetrics, []bool) {
	sort.Ints(js) // v.cfgs is in display order, so the sub-grid is too
	cfgs := make([]*dataset.Config, len(js))
	for i, j := range js {
		cfgs[i] = v.cfgs[j]
	}
	pt := newPatternTable(cfgs, defPolicy)
	pats := make([]int32, len(v.paired))
	key := make([]byte, len(js))
	for pi := range v.paired {
		for i, j := range js {
			key[i] = '0' + byte(b2i(v.correct(pi, j)))
		}
		pats[pi] = pt.id(key)
	}
	m := pt.metrics(pats)
	conf := make([]bool, len(pats))
	for pi, p := range pats {
		conf[pi] = pt.conf[p]
	}
	return ProtocolMetrics{BestFixed: m.BestFixed, BestFixedConfig: m.BestFixedConfig, OracleAccuracy: m.OracleAccuracy,
		OracleHeadroom: m.OracleHeadroom, VisualConfusionRate: m.VisualConfusionRate, TextOverwriteRate: m.TextOverwriteRate,
		UnstableRate: m.UnstableRate}, conf
}
