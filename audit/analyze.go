package audit

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/framesweep/framesweep/audit/cascade"

	"github.com/framesweep/framesweep/audit/dataset"

	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/internal/splitmix"
	"github.com/framesweep/framesweep/record"
)

// MaxResamples bounds Options.Resamples: each resample of each scope holds 16 bytes of intervals and
// draws N indices, so a huge count (10^9 from a hostile export.json) would grow memory by the
// gigabyte. 100,000 resamples put the 2.5/97.5 % percentiles within a fraction of a point of their
// limit; METRICS.md's default is 1000.
const MaxResamples = 100000

// Options steer Analyze. Use DefaultOptions and override fields.
type Options struct {
	Seed          uint64          // bootstrap and fold seed, recorded in the output
	Resamples     int             // bootstrap resamples (METRICS.md: 1000); 0 turns intervals off
	Epsilon       float64         // open-ended regression margin on the 0–1 score scale
	DefaultPolicy string          // the sampling policy of the main grid (sampling recovery, terminal ties)
	Cascade       cascade.Options // the cascade's own; its fold seed and tie-breaking policy are Seed and DefaultPolicy
	// NoCascade skips the automatic cascade (one is still run when Cascade.Budgets is set).
	NoCascade bool
}

// DefaultOptions are METRICS.md's defaults: seed 1, 1000 resamples, ε = 0.05, default policy "uniform".
func DefaultOptions() Options {
	return Options{Seed: cascade.DefaultSeed, Resamples: 1000, Epsilon: 0.05, DefaultPolicy: cascade.DefaultPolicy}
}

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
}

// Dropped explains the items left out of the paired analysis.
type Dropped struct {
	Count           int            `json:"count"`
	TotalItems      int            `json:"total_items"`
	MissingByConfig map[string]int `json:"missing_by_config"`
	Examples        []string       `json:"examples"`
	Reason          string         `json:"reason"`
}

// Pattern is one trajectory (correctness per config, in Result.Configs order restricted to multiple-choice
// configs: '1' correct, '0' wrong) and how many paired items follow it.
type Pattern struct {
	Pattern string `json:"pattern"`
	Count   int    `json:"count"`
	Label   string `json:"label"`
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

// BootstrapInfo records how the intervals were drawn.
type BootstrapInfo struct {
	Seed      uint64 `json:"seed"`
	Resamples int    `json:"resamples"`
	PRNG      string `json:"prng"`
	Interval  string `json:"interval"`
}

// Result is the whole audit; its JSON encoding is `framesweep audit --json`.
type Result struct {
	Metrics
	// AccuracyHarness: per config, the imported harness's own aggregate beside the item-level accuracy of
	// the same records (harness.go); empty when no record carries one.
	AccuracyHarness map[string]*HarnessAccuracy `json:"accuracy_harness"`
	// ErrorRecords are the pairs a sweep recorded as failed ("status": "error"): left out of every
	// metric, counted here so a failure never passes for a wrong answer.
	ErrorRecords ErrorRecords `json:"error_records"`
	// OnlineCascade summarises an online cascade run (cascade.SummarizeOnline); the other metrics then cover only
	// the configs every item was asked at (the ladder's first budget).
	OnlineCascade        *cascade.Online     `json:"online_cascade,omitempty"`
	DroppedItems         Dropped             `json:"dropped_items"`
	Configs              []*dataset.Config   `json:"configs"`
	MCConfigs            []string            `json:"mc_configs"`
	Categories           map[string]*Metrics `json:"categories"`
	Durations            map[string]*Metrics `json:"durations"`
	Bootstrap            BootstrapInfo       `json:"bootstrap"`
	Transitions          []Transition        `json:"transitions"`
	Patterns             []Pattern           `json:"patterns"`
	PatternsOther        int                 `json:"patterns_other"`
	NoiseFloor           []NoiseFloor        `json:"noise_floor"`
	OpenEnded            *OpenEnded          `json:"open_ended"`
	Cascade              *cascade.Result     `json:"cascade"`
	SamplingRecoveryRate *float64            `json:"sampling_recovery_rate"`
	SamplingRecovery     *SamplingRecovery   `json:"sampling_recovery"`
	IsoCompute           []IsoGroup          `json:"iso_compute"`
	PipelineFlips        []PipelineFlip      `json:"pipeline_flips"`
	// ProtocolAgreement compares budget ladders that differ in one protocol factor (protocol.go).
	ProtocolAgreement []ProtocolPair `json:"protocol_agreement"`
	LetterPrior       *LetterPrior   `json:"letter_prior"`
	// Unparsed counts the answers that named no option letter, per config (unparsed.go).
	Unparsed *Unparsed `json:"unparsed"`
	// Warnings are what makes the numbers above unreliable (configs mostly unparsed, a cascade over
	// unparsed answers): the report and the command line show them first.
	Warnings []string `json:"warnings"`
	Notes    []string `json:"notes"`
}

// ErrorRecords summarises the error records of an audit's input.
type ErrorRecords struct {
	Count    int            `json:"count"`
	ByConfig map[string]int `json:"by_config"`
	Examples []string       `json:"examples"` // up to 5: "item config: error"
}

// splitErrors separates the error records from the answered ones (dataset.Answered) and counts them.
func splitErrors(recs []record.Record) ([]record.Record, ErrorRecords) {
	er := ErrorRecords{ByConfig: map[string]int{}, Examples: []string{}}
	ok := dataset.Answered(recs)
	if len(ok) == len(recs) {
		return recs, er
	}
	for i := range recs {
		r := &recs[i]
		if !r.Failed() {
			continue
		}
		er.Count++
		er.ByConfig[r.Config]++
		if len(er.Examples) < 5 {
			er.Examples = append(er.Examples, r.ItemID+" "+r.Config+": "+r.Error)
		}
	}
	return ok, er
}

// Analyze computes the audit of METRICS.md from records. Errors not tied to one line name the records'
// file(s).
func Analyze(recs []record.Record, opt Options) (*Result, error) {
	res, err := analyze(recs, opt)
	var ae *record.Error
	if errors.As(err, &ae) && ae.Path == "" {
		ae.Path = dataset.SourcePaths(recs)
	}
	return res, err
}

// check refuses options out of their ranges (resamples 0..MaxResamples, epsilon 0..1, NaN never),
// before any work.
func (opt Options) check() error {
	if err := num.In(0, MaxResamples).Int("resamples", int64(opt.Resamples)); err != nil {
		return record.Errorf("", 0, "analyze", ErrBadArgs, "%v", err)
	}
	if err := num.In(0, 1).Float("epsilon", opt.Epsilon); err != nil {
		return record.Errorf("", 0, "analyze", ErrBadArgs, "%v", err)
	}
	return nil
}

func analyze(recs []record.Record, opt Options) (*Result, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	online, err := cascade.SummarizeOnline(recs)
	if err != nil {
		return nil, err
	}
	recs, errRecs := splitErrors(recs)
	if online != nil {
		recs = everyItemConfigs(recs)
	}
	d, err := dataset.Build(recs)
	if err != nil {
		return nil, err
	}
	res := &Result{
		OnlineCascade: online,
		ErrorRecords:  errRecs,
		Configs:       d.Configs,
		Categories:    map[string]*Metrics{},
		Durations:     map[string]*Metrics{},
		Bootstrap: BootstrapInfo{Seed: opt.Seed, Resamples: opt.Resamples,
			PRNG:     "SplitMix64; resample b of scope s seeded with splitmix64(seed ^ fnv1a64(s) ^ (b+1)*0x9E3779B97F4A7C15); each output gives two indices, (lo32*n)>>32 then (hi32*n)>>32",
			Interval: "percentile 2.5/97.5, linear interpolation (numpy default)"},
		NoiseFloor:        noiseFloor(d),
		IsoCompute:        []IsoGroup{},
		PipelineFlips:     []PipelineFlip{},
		ProtocolAgreement: []ProtocolPair{},
		Patterns:          []Pattern{},
		Warnings:          []string{},
		Notes:             []string{},
	}
	var mc []int
	for k, c := range d.Configs {
		if c.Kind == "multiple_choice" {
			mc = append(mc, k)
			res.MCConfigs = append(res.MCConfigs, c.ID)
		}
	}
	if len(mc) > 0 {
		if err := analyzeMC(d, mc, opt, res); err != nil {
			return nil, err
		}
	} else {
		res.Metrics = Metrics{Accuracy: map[string]float64{}, Pairs: []Pair{}}
		res.Transitions = []Transition{}
		res.DroppedItems = Dropped{MissingByConfig: map[string]int{}, Examples: []string{}}
		res.Unparsed = &Unparsed{ByConfig: map[string]int{}, Share: map[string]float64{}, AccuracyParsed: map[string]*float64{},
			Mostly: []string{}, Flows: []UnparsedFlow{}, Examples: []string{}}
	}
	if note := unparsedNote(res.Unparsed, res.MCConfigs); note != "" {
		res.Notes = append(res.Notes, note)
	}
	if online != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("online cascade run: %d items, %.1f points from their final answers at %.3g mean distinct frames (online_cascade); the other metrics cover only the configs every item was asked at", online.Items, online.Accuracy, online.MeanFramesDistinct))
	}
	if errRecs.Count > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d error record(s) (pairs the sweep could not answer; first: %s) are left out of every metric", errRecs.Count, errRecs.Examples[0]))
	}
	if note := docDrift(d); note != "" {
		res.Notes = append(res.Notes, note)
	}
	ha, notes, err := harnessAccuracy(d)
	if err != nil {
		return nil, err
	}
	res.AccuracyHarness = ha
	res.Notes = append(res.Notes, notes...)
	res.OpenEnded = openEnded(d, opt)
	if !opt.NoCascade || len(opt.Cascade.Budgets) > 0 {
		cr, note, err := cascade.Run(d, opt.Cascade, opt.Seed, opt.DefaultPolicy)
		if err != nil {
			return nil, err
		}
		res.Cascade = cr
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
	}
	res.Warnings = append(res.Warnings, unparsedWarnings(res.Unparsed, res.Cascade)...)
	return res, nil
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
	scopes, cats, durs := mcScopes(v)
	compute := func(scope string) *Metrics {
		pats := scopes[scope]
		m := v.pt.metrics(pats)
		if len(pats) > 0 && opt.Resamples > 0 {
			m.OracleHeadroomCI, m.VisualConfusionRateCI = v.pt.bootstrap(pats, opt.Seed, scope, opt.Resamples)
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
				drop.Examples = append(drop.Examples, d.Items[i])
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
// duration seen on any multiple-choice record (a scope may hold no paired item).
func mcScopes(v *mcView) (scopes map[string][]int32, cats, durs map[string]bool) {
	d, mc := v.d, v.ks
	scopes = map[string][]int32{"all": v.pat}
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
	byCat, byDur := map[string][]int32{}, map[string][]int32{}
	for pi, i := range v.paired {
		cat, dur := itemAttr(d, i, mc)
		if cat != "" {
			byCat[cat] = append(byCat[cat], v.pat[pi])
		}
		if dur != "" {
			byDur[dur] = append(byDur[dur], v.pat[pi])
		}
	}
	for c, p := range byCat {
		scopes["category:"+c] = p
	}
	for du, p := range byDur {
		scopes["duration:"+du] = p
	}
	return scopes, cats, durs
}

// docDrift reports items whose doc_hash differs between configs: the configs did not see the same
// document (a dataset revision between runs), so their answers are not comparable.
func docDrift(d *dataset.Dataset) string {
	C := len(d.Configs)
	n := 0
	var ex []string
	for i := range d.Items {
		h := ""
		for k := 0; k < C; k++ {
			j := d.Grid[i*C+k]
			if j < 0 || d.Recs[j].DocHash == "" {
				continue
			}
			if h == "" {
				h = d.Recs[j].DocHash
			} else if d.Recs[j].DocHash != h {
				n++
				if len(ex) < 5 {
					ex = append(ex, d.Items[i])
				}
				break
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("dataset drift: %d items have different doc_hash values across configs (e.g. %s); their answers may not be comparable", n, strings.Join(ex, ", "))
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
		pt.topNote = strings.TrimSpace(pt.topNote + fmt.Sprintf(" configs %s have no frames in config_meta: their cost is unknown, so they are ordered against nothing (import with --frames)", strings.Join(unknown, ", ")))
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

func pct(num, den int) *float64 {
	if den == 0 {
		return nil
	}
	v := 100 * float64(num) / float64(den)
	return &v
}

// metrics computes one scope's Metrics from its items' pattern ids.
func (pt *patternTable) metrics(pats []int32) *Metrics {
	C := len(pt.cfgs)
	m := &Metrics{Items: len(pats), Accuracy: map[string]float64{}, Pairs: []Pair{}}
	n := len(pats)
	if n == 0 {
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
	// Confusion needs two configs of different known cost; otherwise it is undefined, not 0.
	if pt.nLevels >= 2 {
		m.VisualConfusionRate = pct(conf, n)
	}
	if len(pt.text) > 0 {
		if pt.nVisLev >= 2 {
			m.VisualConfusionRateVisualOnly = pct(confVis, n)
		}
		m.TextCorrectItems = &textOK
		// Overwrite needs a visual config to overwrite the text answer; without one it is undefined.
		if len(pt.visual) > 0 {
			m.TextOverwriteRate = pct(textOver, n)
			m.TextOverwriteRateOfTextCorrect = pct(textOver, textOK)
			m.TextOverwriteAllVisualRate = pct(textAll, n)
		}
	} else {
		m.VisualConfusionRateVisualOnly = m.VisualConfusionRate
	}
	if pt.top >= 0 {
		m.TerminalRegressionRate = pct(term, n)
		m.TerminalConfig = pt.cfgs[pt.top].ID
	}
	m.UnstableRate = pct(unstable, n)
	m.Pairs = pt.pairs(counts, n)
	return m
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

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// bootstrap draws resamples of the scope's items (with replacement) and returns the 95% percentile
// intervals of oracle_headroom and visual_confusion_rate. Resamples run in parallel; each has its own
// documented stream, so the result does not depend on the number of workers.
func (pt *patternTable) bootstrap(pats []int32, seed uint64, scope string, B int) (*Interval, *Interval) {
	C, P, n := len(pt.cfgs), len(pt.keys), len(pats)
	head := make([]float64, B)
	conf := make([]float64, B)
	workers := min(runtime.GOMAXPROCS(0), B)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			counts := make([]int, P)
			acc := make([]int, C)
			for b := w; b < B; b += workers {
				clear(counts)
				g := splitmix.Source{State: streamSeed(seed, scope, b)}
				// Two draws per 64-bit output: index = (half × n) >> 32, low half first (see rng.go).
				n64 := uint64(n)
				j := 0
				for ; j+1 < n; j += 2 {
					x := g.Uint64()
					counts[pats[(x&0xFFFFFFFF*n64)>>32]]++
					counts[pats[(x>>32*n64)>>32]]++
				}
				if j < n {
					counts[pats[(g.Uint64()&0xFFFFFFFF*n64)>>32]]++
				}
				clear(acc)
				oracle, cf := 0, 0
				for p, cnt := range counts {
					if cnt == 0 {
						continue
					}
					for j := 0; j < C; j++ {
						acc[j] += cnt * int(pt.bits[p*C+j])
					}
					oracle += cnt * b2i(pt.oracle[p])
					cf += cnt * b2i(pt.conf[p])
				}
				best := 0
				for _, a := range acc {
					best = max(best, a)
				}
				head[b] = 100 * float64(oracle-best) / float64(n)
				conf[b] = 100 * float64(cf) / float64(n)
			}
		}(w)
	}
	wg.Wait()
	h, c := sortedCopy(head), sortedCopy(conf)
	return &Interval{Percentile(h, 0.025), Percentile(h, 0.975)}, &Interval{Percentile(c, 0.025), Percentile(c, 0.975)}
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

// everyItemConfigs keeps the records of the configs that every item has a record at (an online
// cascade asks the higher budgets only of the items still unsure: pairing them would keep only the
// items that escalated all the way).
func everyItemConfigs(recs []record.Record) []record.Record {
	items := map[string]bool{}
	per := map[string]map[string]bool{}
	for _, r := range recs {
		items[r.ItemID] = true
		if per[r.Config] == nil {
			per[r.Config] = map[string]bool{}
		}
		per[r.Config][r.ItemID] = true
	}
	var out []record.Record
	for _, r := range recs {
		if len(per[r.Config]) == len(items) {
			out = append(out, r)
		}
	}
	return out
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
