package audit

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/framesweep/framesweep/audit/cascade"
	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/internal/num"
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
	// Cluster is the bootstrap's resampling unit: ClusterAuto ("" too), ClusterItem, ClusterVideo or
	// ClusterVideoID (bootstrap.go).
	Cluster string
}

// cluster is the resampling unit asked for, ClusterAuto when none is.
func (opt Options) cluster() string {
	if opt.Cluster == "" {
		return ClusterAuto
	}
	return opt.Cluster
}

// DefaultOptions are METRICS.md's defaults: seed 1, 1000 resamples, ε = 0.05, default policy "uniform".
func DefaultOptions() Options {
	return Options{Seed: cascade.DefaultSeed, Resamples: 1000, Epsilon: 0.05, DefaultPolicy: cascade.DefaultPolicy}
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
	// VisualTokens: per config, the visual tokens the model counted against those its frames make
	// (visualtokens.go); absent when no record carries both counts.
	VisualTokens []VisualTokenConfig `json:"visual_tokens,omitempty"`
	// Warnings are what makes the numbers above unreliable (configs mostly unparsed, a cascade over
	// unparsed answers): the report and the command line show them first.
	Warnings []string `json:"warnings"`
	Notes    []string `json:"notes"`
	// Tasks is every task's own audit (its records alone), when the records are of several tasks;
	// Pool says how the audit above pooled them (tasks.go).
	Tasks map[string]*Result `json:"tasks,omitempty"`
	Pool  *Pool              `json:"pool,omitempty"`
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
	if !slices.Contains(Clusters, opt.cluster()) {
		return record.Errorf("", 0, "analyze", ErrBadArgs, "cluster %q (want one of %s)", opt.Cluster, strings.Join(Clusters, ", "))
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
	checks := visualTokenChecks(recs) // error records too: --strict-tokens' carry their counts
	recs, errRecs := splitErrors(recs)
	if online != nil {
		recs = everyItemConfigs(recs)
	}
	d, err := dataset.Build(recs)
	if err != nil {
		return nil, err
	}
	res := &Result{
		OnlineCascade:     online,
		ErrorRecords:      errRecs,
		Configs:           d.Configs,
		Categories:        map[string]*Metrics{},
		Durations:         map[string]*Metrics{},
		Bootstrap:         bootstrapInfo(opt),
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
	addVisualTokens(res, checks)
	return res, nil
}

// bootstrapInfo is how the intervals are drawn.
func bootstrapInfo(opt Options) BootstrapInfo {
	return BootstrapInfo{Seed: opt.Seed, Resamples: opt.Resamples,
		PRNG:     "SplitMix64; resample b of scope s seeded with splitmix64(seed ^ fnv1a64(s) ^ (b+1)*0x9E3779B97F4A7C15); each output gives two indices, (lo32*n)>>32 then (hi32*n)>>32",
		Interval: "percentile 2.5/97.5, linear interpolation (numpy default)", Cluster: ClusterItem}
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
					ex = append(ex, d.Name(i))
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

// everyItemConfigs keeps the records of the configs that every item has a record at (an online
// cascade asks the higher budgets only of the items still unsure: pairing them would keep only the
// items that escalated all the way).
func everyItemConfigs(recs []record.Record) []record.Record {
	items := map[dataset.ItemKey]bool{}
	per := map[string]map[dataset.ItemKey]bool{}
	for i := range recs {
		r := &recs[i]
		items[dataset.KeyOf(r)] = true
		if per[r.Config] == nil {
			per[r.Config] = map[dataset.ItemKey]bool{}
		}
		per[r.Config][dataset.KeyOf(r)] = true
	}
	var out []record.Record
	for _, r := range recs {
		if len(per[r.Config]) == len(items) {
			out = append(out, r)
		}
	}
	return out
}
