package audit

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/record"
)

// HarnessAccuracy is one config's harness aggregate beside the item-level accuracy of the same records
// (`accuracy_harness` in the output). A config whose records carry several harness metrics (several
// tasks) lists them in Parts, and its own Value is null: the harness printed no number over all of them.
type HarnessAccuracy struct {
	Metric  string   `json:"metric"`
	Kind    string   `json:"kind,omitempty"`
	Value   *float64 `json:"value"`    // the harness's aggregate, points
	Counted int      `json:"counted"`  // records it counts
	LeftOut int      `json:"left_out"` // records it leaves out
	Records int      `json:"records"`  // records of this config that carry the metric
	// ItemLevel is 100 · correct/records (mean score for open-ended) over the same records with the
	// audit's verdicts: left-out records count as wrong. It is not the paired accuracy, which keeps only
	// items present in every config.
	ItemLevel *float64 `json:"item_level"`
	Rescored  int      `json:"rescored"` // records whose verdict an opt-in rescore changed
	// Complete: the records are exactly the file the value was computed on (counted and left-out numbers
	// match). When false, the value still describes the imported file, not these records.
	Complete bool `json:"complete"`
	// ByDuration: for a micro aggregate, the same rule per duration group (as Video-MME's harnesses print it).
	ByDuration map[string]float64 `json:"by_duration,omitempty"`
	Parts      []*HarnessAccuracy `json:"parts,omitempty"`
}

// harnessAccuracy groups the primary records of each config by harness metric and checks that every
// record of a group agrees on the file-level numbers.
func harnessAccuracy(d *dataset.Dataset) (map[string]*HarnessAccuracy, []string, error) {
	out := map[string]*HarnessAccuracy{}
	var notes []string
	for k, c := range d.Configs {
		groups, bare, err := harnessGroups(d, k)
		if err != nil {
			return nil, nil, err
		}
		if len(groups) == 0 {
			continue
		}
		if bare > 0 {
			notes = append(notes, fmt.Sprintf("config %s: %d records carry no harness aggregate (not imported from a harness log, or mapped with --correct-from/--pred-field)", c.ID, bare))
		}
		metrics := make([]string, 0, len(groups))
		for m := range groups {
			metrics = append(metrics, m)
		}
		sort.Strings(metrics)
		var parts []*HarnessAccuracy
		for _, m := range metrics {
			parts = append(parts, groups[m].finish(c.ID, &notes))
		}
		out[c.ID] = joinHarness(parts)
	}
	return out, notes, nil
}

// harnessAcc accumulates one harness metric's records of one config.
type harnessAcc struct {
	h                         *HarnessAccuracy
	first                     *record.Record
	counted, skipped, flipped int
	okHarness, okRecord       float64
	durN, durOK               map[string]float64
}

// harnessGroups gathers config k's records by harness metric (bare: records without one); records of
// one metric must agree on its kind, value and counts.
func harnessGroups(d *dataset.Dataset, k int) (map[string]*harnessAcc, int, error) {
	C, c := len(d.Configs), d.Configs[k]
	groups := map[string]*harnessAcc{}
	bare := 0
	for i := range d.Items {
		j := d.Grid[i*C+k]
		if j < 0 {
			continue
		}
		r := &d.Recs[j]
		h := r.Harness
		if h == nil {
			bare++
			continue
		}
		g := groups[h.Metric]
		if g == nil {
			g = &harnessAcc{h: &HarnessAccuracy{Metric: h.Metric, Kind: h.Kind, Counted: h.Counted, LeftOut: h.LeftOut},
				first: r, durN: map[string]float64{}, durOK: map[string]float64{}}
			v := h.Value
			g.h.Value = &v
			groups[h.Metric] = g
		} else if f := g.first.Harness; f.Kind != h.Kind || f.Value != h.Value || f.Counted != h.Counted || f.LeftOut != h.LeftOut {
			return nil, 0, record.Errorf(r.Source.Path, r.Source.Line, "harness", record.ErrConflict,
				"config %q: harness %q is %s %v over %d (+%d left out) here but %s %v over %d (+%d) at %s:%d; import each file under its own config",
				c.ID, h.Metric, h.Kind, h.Value, h.Counted, h.LeftOut, f.Kind, f.Value, f.Counted, f.LeftOut, g.first.Source.Path, g.first.Source.Line)
		}
		g.add(r)
	}
	return groups, bare, nil
}

func (g *harnessAcc) add(r *record.Record) {
	h := r.Harness
	g.h.Records++
	v := recordValue(r)
	g.okRecord += v
	if h.Flipped {
		g.flipped++
		v = 1 - v // a flip only happens to a multiple-choice verdict
	}
	if h.Skip {
		g.skipped++
		return
	}
	g.counted++
	g.okHarness += v
	if r.Duration != "" {
		g.durN[r.Duration]++
		g.durOK[r.Duration] += v
	}
}

// finish completes the metric's HarnessAccuracy: the item-level accuracy of the same records, whether
// the records are the ones the aggregate was computed over, and for a micro aggregate whether their
// verdicts still give it and its value per duration. It adds its notes.
func (g *harnessAcc) finish(config string, notes *[]string) *HarnessAccuracy {
	h := g.h
	il := 100 * g.okRecord / float64(h.Records)
	h.ItemLevel = &il
	h.Rescored = g.flipped
	h.Complete = g.counted == h.Counted && g.skipped == h.LeftOut
	if !h.Complete {
		*notes = append(*notes, fmt.Sprintf("config %s: the harness aggregate %s (%s) was computed over %d records (+%d left out), but %d (+%d) are here: the records were filtered or merged after import, so it describes the imported file, not these records",
			config, h.Metric, fmtPoints(*h.Value), h.Counted, h.LeftOut, g.counted, g.skipped))
	}
	if h.Kind == record.HarnessMicro && g.counted > 0 {
		if re := 100 * g.okHarness / float64(g.counted); h.Complete && math.Abs(re-*h.Value) > 1e-6 {
			*notes = append(*notes, fmt.Sprintf("config %s: the harness aggregate %s says %s but the counted records' harness verdicts give %s: the records were edited after import",
				config, h.Metric, fmtPoints(*h.Value), fmtPoints(re)))
		}
		if len(g.durN) > 0 {
			h.ByDuration = map[string]float64{}
			for du, n := range g.durN {
				h.ByDuration[du] = 100 * g.durOK[du] / n
			}
		}
	}
	return h
}

// joinHarness is a config's harness accuracy: its one metric's, or with several (several tasks) a
// summary listing them as Parts, with no value of its own.
func joinHarness(parts []*HarnessAccuracy) *HarnessAccuracy {
	if len(parts) == 1 {
		return parts[0]
	}
	all := &HarnessAccuracy{Metric: fmt.Sprintf("%d harness aggregates", len(parts)), Complete: true, Parts: parts}
	ok := 0.0
	for _, p := range parts {
		all.Counted += p.Counted
		all.LeftOut += p.LeftOut
		all.Records += p.Records
		all.Rescored += p.Rescored
		all.Complete = all.Complete && p.Complete
		ok += *p.ItemLevel * float64(p.Records) / 100
	}
	il := 100 * ok / float64(all.Records)
	all.ItemLevel = &il
	return all
}

// recordValue is 1/0 for a multiple-choice verdict, the score for an open-ended record.
func recordValue(r *record.Record) float64 {
	if r.Correct != nil {
		return float64(b2i(*r.Correct))
	}
	return *r.Score
}

func fmtPoints(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
}
