package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/record"
)

// Interval is a percentile bootstrap 95% interval.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Pair holds the flows between a cheaper config (From) and a costlier one (To).
type Pair struct {
	From            string  `json:"from"`
	To              string  `json:"to"`
	Adjacent        bool    `json:"adjacent"` // To's cost level directly follows From's
	Rescued         int     `json:"rescued"`
	Harmed          int     `json:"harmed"`
	Churn           int     `json:"churn"`
	Net             float64 `json:"net"`
	StateChangeRate float64 `json:"state_change_rate"`
	McNemarP        float64 `json:"mcnemar_p"`
}

// Metrics are the multiple-choice metrics of METRICS.md over one population (all items, one category, one
// duration). Pointer fields are null when undefined (no items, no text-only config, no unique top config).
type Metrics struct {
	Items                          int                `json:"items"`
	Accuracy                       map[string]float64 `json:"accuracy"`
	BestFixed                      *float64           `json:"best_fixed"`
	BestFixedConfig                string             `json:"best_fixed_config,omitempty"`
	OracleAccuracy                 *float64           `json:"oracle_accuracy"`
	OracleHeadroom                 *float64           `json:"oracle_headroom"`
	OracleHeadroomCI               *Interval          `json:"oracle_headroom_ci"`
	VisualConfusionRate            *float64           `json:"visual_confusion_rate"`
	VisualConfusionRateCI          *Interval          `json:"visual_confusion_rate_ci"`
	VisualConfusionRateVisualOnly  *float64           `json:"visual_confusion_rate_visual_only"`
	TerminalRegressionRate         *float64           `json:"terminal_regression_rate"`
	TerminalConfig                 string             `json:"terminal_config,omitempty"`
	TextCorrectItems               *int               `json:"text_correct_items"`
	TextOverwriteRate              *float64           `json:"text_overwrite_rate"`
	TextOverwriteRateOfTextCorrect *float64           `json:"text_overwrite_rate_of_text_correct"`
	TextOverwriteAllVisualRate     *float64           `json:"text_overwrite_all_visual_rate"`
	UnstableRate                   *float64           `json:"unstable_rate"`
	Pairs                          []Pair             `json:"pairs"`
	// Undefined says, for each metric above that is null (and for pairs and transitions when the
	// configs have no order), why: JSON key → reason. Absent when every metric is defined.
	Undefined map[string]string `json:"undefined,omitempty"`
}

// undefine marks metric key undefined for reason (the first reason given stays).
func (m *Metrics) undefine(key, reason string) {
	if m.Undefined == nil {
		m.Undefined = map[string]string{}
	}
	if _, ok := m.Undefined[key]; !ok {
		m.Undefined[key] = reason
	}
}

// coreKeys are the nullable metrics of METRICS.md's core table, in its order.
var coreKeys = []string{"best_fixed", "oracle_accuracy", "oracle_headroom", "visual_confusion_rate", "visual_confusion_rate_visual_only",
	"terminal_regression_rate", "text_correct_items", "text_overwrite_rate", "text_overwrite_rate_of_text_correct", "text_overwrite_all_visual_rate", "unstable_rate"}

// OrderKeys are the metrics that need an order over the configs: undefined, with the same reason,
// when some config's cost is unknown.
var OrderKeys = []string{"visual_confusion_rate", "visual_confusion_rate_visual_only", "terminal_regression_rate", "pairs"}

// Dropped explains the items left out of the paired analysis.
type Dropped struct {
	Count           int            `json:"count"`
	TotalItems      int            `json:"total_items"`
	MissingByConfig map[string]int `json:"missing_by_config"`
	Examples        []string       `json:"examples"`
	Reason          string         `json:"reason"`
}

// Transition counts the four flows between two consecutive multiple-choice configs in display order
// (cost order; equal-cost neighbours included, which Pairs leaves out). It feeds the flow diagram.
type Transition struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Ordered     bool   `json:"ordered"` // From is strictly cheaper than To
	BothCorrect int    `json:"both_correct"`
	Rescued     int    `json:"rescued"`
	Harmed      int    `json:"harmed"`
	BothWrong   int    `json:"both_wrong"`
}

// mcView is the paired multiple-choice matrix: one pattern id per paired item.
type mcView struct {
	d      *dataset.Dataset
	cfgs   []*dataset.Config // the multiple-choice configs, display order
	ks     []int             // their indices in d.Configs
	paired []int             // item indices (into d.Items) present in every mc config
	pat    []int32           // pattern id per paired item
	pt     *patternTable
}

func (v *mcView) correct(pi, j int) bool { // pi: position in paired, j: position in cfgs
	return v.pt.bits[int(v.pat[pi])*len(v.cfgs)+j] == 1
}

func analyzeMC(d *dataset.Dataset, mc []int, opt Options, res *Result) error {
	v := &mcView{d: d, ks: mc}
	for _, k := range mc {
		v.cfgs = append(v.cfgs, d.Configs[k])
	}
	v.paired, res.DroppedItems = pairItems(d, mc, v.cfgs)
	v.patterns(opt.DefaultPolicy)
	if v.pt.topNote != "" {
		res.Notes = append(res.Notes, v.pt.topNote)
	}
	clus, err := v.clusters(opt.cluster(), &res.Bootstrap)
	if err != nil {
		return record.Errorf(dataset.SourcePaths(d.Recs), 0, "analyze", ErrBadArgs, "%v", err)
	}
	scopes, scopeClus, cats, durs := mcScopes(v, clus)
	compute := func(scope string) *Metrics {
		pats := scopes[scope]
		m := v.pt.metrics(pats)
		if len(pats) > 0 && opt.Resamples > 0 {
			m.OracleHeadroomCI, m.VisualConfusionRateCI = v.pt.bootstrap(pats, scopeClus[scope], opt.Seed, scope, opt.Resamples)
			if m.VisualConfusionRate == nil {
				m.VisualConfusionRateCI = nil
			}
		}
		return m
	}
	res.Metrics = *compute("all")
	for c := range cats {
		res.Categories[c] = compute("category:" + c)
	}
	for du := range durs {
		res.Durations[du] = compute("duration:" + du)
	}
	res.Patterns, res.PatternsOther = v.pt.topPatterns(v.pat, 200)
	res.Transitions = v.pt.transitions(v.pat)
	if v.pt.unordered != "" {
		res.undefine("transitions", v.pt.unordered)
	}
	sr, srNote := samplingRecovery(v, opt.DefaultPolicy)
	if sr != nil {
		res.SamplingRecovery = sr
		res.SamplingRecoveryRate = sr.Rate
	} else if srNote != "" {
		res.Notes = append(res.Notes, srNote)
	}
	res.IsoCompute = isoCompute(v)
	res.PipelineFlips = pipelineFlips(v)
	res.ProtocolAgreement = protocolAgreement(v, opt.DefaultPolicy)
	res.LetterPrior = letterPrior(v)
	res.Unparsed = unparsed(v, res.Pairs)
	return nil
}

// pairItems keeps the items with a record in every config of mc (the paired analysis) and says how
// many were dropped and why.
func pairItems(d *dataset.Dataset, mc []int, cfgs []*dataset.Config) ([]int, Dropped) {
	C := len(d.Configs)
	var paired []int
	drop := Dropped{MissingByConfig: map[string]int{}, Examples: []string{}}
	for i := range d.Items {
		ok, any := true, false
		for _, k := range mc {
			if d.Grid[i*C+k] < 0 {
				ok = false
				drop.MissingByConfig[d.Configs[k].ID]++
			} else {
				any = true
			}
		}
		if !any {
			continue // an open-ended-only item
		}
		drop.TotalItems++
		if ok {
			paired = append(paired, i)
		} else {
			drop.Count++
			if len(drop.Examples) < 10 {
				drop.Examples = append(drop.Examples, d.Name(i))
			}
		}
	}
	if drop.Count > 0 {
		var parts []string
		for _, c := range cfgs {
			if n := drop.MissingByConfig[c.ID]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d lack config %s", n, c.ID))
			}
		}
		drop.Reason = fmt.Sprintf("%d of %d items lack a record in at least one config (%s); paired analysis keeps only items present in every config",
			drop.Count, drop.TotalItems, strings.Join(parts, ", "))
	}
	return paired, drop
}

// patterns gives every paired item its trajectory: the pattern of its verdicts across the configs.
func (v *mcView) patterns(defaultPolicy string) {
	d, C := v.d, len(v.d.Configs)
	v.pt = newPatternTable(v.cfgs, defaultPolicy)
	v.pat = make([]int32, len(v.paired))
	key := make([]byte, len(v.ks))
	for pi, i := range v.paired {
		for j, k := range v.ks {
			key[j] = '0'
			if *d.Recs[d.Grid[i*C+k]].Correct {
				key[j] = '1'
			}
		}
		v.pat[pi] = v.pt.id(key)
	}
}

// mcScopes are the item sets metrics are computed over: all paired items, then each category and
// duration seen on any multiple-choice record (a scope may hold no paired item); with clus (each
// paired item's cluster) each scope's items' clusters, parallel to its patterns.
func mcScopes(v *mcView, clus []int32) (scopes, scopeClus map[string][]int32, cats, durs map[string]bool) {
	d, mc := v.d, v.ks
	scopes, scopeClus = map[string][]int32{"all": v.pat}, map[string][]int32{"all": clus}
	cats, durs = map[string]bool{}, map[string]bool{}
	lastCat, lastDur := "", ""
	for i := range d.Items {
		for _, k := range mc {
			if r := d.Cell(i, k); r != nil {
				if r.Category != "" && r.Category != lastCat {
					cats[r.Category], lastCat = true, r.Category
				}
				if r.Duration != "" && r.Duration != lastDur {
					durs[r.Duration], lastDur = true, r.Duration
				}
			}
		}
	}
	add := func(scope string, pi int) {
		scopes[scope] = append(scopes[scope], v.pat[pi])
		if clus != nil {
			scopeClus[scope] = append(scopeClus[scope], clus[pi])
		}
	}
	for pi, i := range v.paired {
		cat, dur := itemAttr(d, i, mc)
		if cat != "" {
			add("category:"+cat, pi)
		}
		if dur != "" {
			add("duration:"+dur, pi)
		}
	}
	return scopes, scopeClus, cats, durs
}

// itemAttr is an item's category and duration: the first non-empty value in config display order.
func itemAttr(d *dataset.Dataset, i int, ks []int) (cat, dur string) {
	for _, k := range ks {
		if r := d.Cell(i, k); r != nil {
			if cat == "" {
				cat = r.Category
			}
			if dur == "" {
				dur = r.Duration
			}
		}
	}
	return cat, dur
}

// metrics computes one scope's Metrics from its items' pattern ids.
func (pt *patternTable) metrics(pats []int32) *Metrics {
	C := len(pt.cfgs)
	m := &Metrics{Items: len(pats), Accuracy: map[string]float64{}, Pairs: []Pair{}}
	n := len(pats)
	if n == 0 {
		for _, k := range coreKeys {
			m.undefine(k, "no paired item")
		}
		return m
	}
	counts := make([]int, len(pt.keys))
	for _, p := range pats {
		counts[p]++
	}
	acc := make([]int, C)
	var oracle, conf, confVis, term, textOK, textOver, textAll, unstable int
	for p, cnt := range counts {
		if cnt == 0 {
			continue
		}
		for j := 0; j < C; j++ {
			acc[j] += cnt * int(pt.bits[p*C+j])
		}
		oracle += cnt * b2i(pt.oracle[p])
		conf += cnt * b2i(pt.conf[p])
		confVis += cnt * b2i(pt.confVis[p])
		term += cnt * b2i(pt.terminal[p])
		textOK += cnt * b2i(pt.textOK[p])
		textOver += cnt * b2i(pt.textOver[p])
		textAll += cnt * b2i(pt.textAllVis[p])
		unstable += cnt * b2i(pt.unstable[p])
	}
	best := -1
	for j, c := range pt.cfgs {
		m.Accuracy[c.ID] = 100 * float64(acc[j]) / float64(n)
		// Ties: lowest cost, then (equal or unknown cost) the first in display order.
		if best < 0 || acc[j] > acc[best] || (acc[j] == acc[best] && dataset.CostLess(c, pt.cfgs[best])) {
			best = j
		}
	}
	bf := m.Accuracy[pt.cfgs[best].ID]
	m.BestFixed, m.BestFixedConfig = &bf, pt.cfgs[best].ID
	m.OracleAccuracy = pct(oracle, n)
	h := *m.OracleAccuracy - bf
	m.OracleHeadroom = &h
	pt.orderMetrics(m, n, conf, confVis, term)
	if len(pt.text) == 0 {
		for _, k := range []string{"text_correct_items", "text_overwrite_rate", "text_overwrite_rate_of_text_correct", "text_overwrite_all_visual_rate"} {
			m.undefine(k, "no text-only config")
		}
	} else {
		m.TextCorrectItems = &textOK
		// Overwrite needs a visual config to overwrite the text answer; without one it is undefined.
		if len(pt.visual) > 0 {
			m.TextOverwriteRate = pct(textOver, n)
			m.TextOverwriteRateOfTextCorrect = pct(textOver, textOK)
			m.TextOverwriteAllVisualRate = pct(textAll, n)
			if textOK == 0 {
				m.undefine("text_overwrite_rate_of_text_correct", "no text-correct item")
			}
		} else {
			for _, k := range []string{"text_overwrite_rate", "text_overwrite_rate_of_text_correct", "text_overwrite_all_visual_rate"} {
				m.undefine(k, "no visual config")
			}
		}
	}
	m.UnstableRate = pct(unstable, n)
	if pt.unordered == "" {
		m.Pairs = pt.pairs(counts, n)
	}
	return m
}

// orderMetrics sets the metrics that need an order over the configs (confusion, terminal
// regression), or says why each is undefined: some cost unknown, fewer than two cost levels, no
// unique costliest config.
func (pt *patternTable) orderMetrics(m *Metrics, n, conf, confVis, term int) {
	if pt.unordered != "" {
		for _, k := range OrderKeys {
			m.undefine(k, pt.unordered)
		}
		return
	}
	// Confusion needs two configs of different known cost; otherwise it is undefined, not 0.
	if pt.nLevels >= 2 {
		m.VisualConfusionRate = pct(conf, n)
	} else {
		m.undefine("visual_confusion_rate", "fewer than two configs of different cost")
	}
	switch {
	case len(pt.text) == 0:
		m.VisualConfusionRateVisualOnly = m.VisualConfusionRate
		if m.VisualConfusionRate == nil {
			m.undefine("visual_confusion_rate_visual_only", "fewer than two configs of different cost")
		}
	case pt.nVisLev >= 2:
		m.VisualConfusionRateVisualOnly = pct(confVis, n)
	default:
		m.undefine("visual_confusion_rate_visual_only", "fewer than two visual configs of different cost")
	}
	switch {
	case pt.top >= 0:
		m.TerminalRegressionRate = pct(term, n)
		m.TerminalConfig = pt.cfgs[pt.top].ID
	case pt.nLevels < 2:
		m.undefine("terminal_regression_rate", "a single cost level: nothing is cheaper than the costliest config")
	default:
		m.undefine("terminal_regression_rate", pt.topNote)
	}
}

func pct(num, den int) *float64 {
	if den == 0 {
		return nil
	}
	v := 100 * float64(num) / float64(den)
	return &v
}

func (pt *patternTable) pairs(counts []int, n int) []Pair {
	C := len(pt.cfgs)
	out := []Pair{}
	for a := 0; a < C; a++ {
		for b := 0; b < C; b++ {
			if !dataset.CostLess(pt.cfgs[a], pt.cfgs[b]) {
				continue
			}
			var r, h int
			for p, cnt := range counts {
				ca, cb := pt.bits[p*C+a], pt.bits[p*C+b]
				if ca == 0 && cb == 1 {
					r += cnt
				} else if ca == 1 && cb == 0 {
					h += cnt
				}
			}
			out = append(out, Pair{From: pt.cfgs[a].ID, To: pt.cfgs[b].ID, Adjacent: pt.levels[b] == pt.levels[a]+1,
				Rescued: r, Harmed: h, Churn: r + h, Net: 100 * float64(r-h) / float64(n),
				StateChangeRate: 100 * float64(r+h) / float64(n), McNemarP: McNemarExact(r, h)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Adjacent != out[j].Adjacent {
			return out[i].Adjacent
		}
		return false
	})
	return out
}

func (pt *patternTable) transitions(pats []int32) []Transition {
	C := len(pt.cfgs)
	if pt.unordered != "" {
		return []Transition{} // consecutive in display order would be consecutive by name
	}
	counts := make([]int, len(pt.keys))
	for _, p := range pats {
		counts[p]++
	}
	out := []Transition{}
	for a := 0; a+1 < C; a++ {
		t := Transition{From: pt.cfgs[a].ID, To: pt.cfgs[a+1].ID, Ordered: dataset.CostLess(pt.cfgs[a], pt.cfgs[a+1])}
		for p, cnt := range counts {
			switch ca, cb := pt.bits[p*C+a], pt.bits[p*C+a+1]; {
			case ca == 1 && cb == 1:
				t.BothCorrect += cnt
			case ca == 0 && cb == 1:
				t.Rescued += cnt
			case ca == 1 && cb == 0:
				t.Harmed += cnt
			default:
				t.BothWrong += cnt
			}
		}
		out = append(out, t)
	}
	return out
}
