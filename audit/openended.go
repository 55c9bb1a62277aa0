package audit

import (
	"fmt"

	"github.com/framesweep/framesweep/audit/dataset"
)

// OpenEnded holds the open-ended metrics (METRICS.md "Open-ended tasks") over items that have a score in
// every open-ended config. All values are points (100 · score).
type OpenEnded struct {
	Items       int                 `json:"items"`
	Dropped     int                 `json:"dropped"`
	Configs     []string            `json:"configs"`
	MeanScore   map[string]float64  `json:"mean_score"`
	BestFixed   float64             `json:"best_fixed"`
	BestConfig  string              `json:"best_fixed_config"`
	OracleMean  float64             `json:"oracle_mean"`
	OracleGap   float64             `json:"oracle_gap"`
	Epsilon     float64             `json:"epsilon"`
	Regression  []OERegression      `json:"regression"`
	Categories  map[string]*OEGroup `json:"categories"`
	Durations   map[string]*OEGroup `json:"durations"`
	DroppedNote string              `json:"dropped_reason,omitempty"`
}

// OEGroup is the open-ended summary over one category or duration.
type OEGroup struct {
	Items      int                `json:"items"`
	MeanScore  map[string]float64 `json:"mean_score"`
	BestFixed  float64            `json:"best_fixed"`
	BestConfig string             `json:"best_fixed_config"`
	OracleMean float64            `json:"oracle_mean"`
	OracleGap  float64            `json:"oracle_gap"`
}

// oeSummary computes mean scores, best fixed and the oracle over items (all in every config of ks).
func oeSummary(d *dataset.Dataset, ks []int, items []int) *OEGroup {
	C := len(d.Configs)
	g := &OEGroup{Items: len(items), MeanScore: map[string]float64{}}
	if len(items) == 0 {
		return g
	}
	n := float64(len(items))
	sums := make([]float64, len(ks))
	oracle := 0.0
	for _, i := range items {
		best := 0.0
		for j, k := range ks {
			v := *d.Recs[d.Grid[i*C+k]].Score
			sums[j] += v
			best = max(best, v)
		}
		oracle += best
	}
	bestJ := 0
	for j, k := range ks {
		g.MeanScore[d.Configs[k].ID] = 100 * sums[j] / n
		if sums[j] > sums[bestJ] || (sums[j] == sums[bestJ] && dataset.CostLess(d.Configs[k], d.Configs[ks[bestJ]])) {
			bestJ = j
		}
	}
	g.BestFixed, g.BestConfig = 100*sums[bestJ]/n, d.Configs[ks[bestJ]].ID
	g.OracleMean = 100 * oracle / n
	g.OracleGap = g.OracleMean - g.BestFixed
	return g
}

// OERegression is one ordered pair (From cheaper than To).
type OERegression struct {
	From           string  `json:"from"`
	To             string  `json:"to"`
	MeanChange     float64 `json:"mean_change"`     // points
	RegressionRate float64 `json:"regression_rate"` // % of items with s(To) < s(From) − ε
	ImprovedRate   float64 `json:"improved_rate"`   // % of items with s(To) > s(From) + ε
}

func openEnded(d *dataset.Dataset, opt Options) *OpenEnded {
	var ks []int
	for k, c := range d.Configs {
		if c.Kind == "open_ended" {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return nil
	}
	C := len(d.Configs)
	oe := &OpenEnded{MeanScore: map[string]float64{}, Epsilon: opt.Epsilon, Regression: []OERegression{},
		Categories: map[string]*OEGroup{}, Durations: map[string]*OEGroup{}}
	var paired []int
	for i := range d.Items {
		have, any := 0, false
		for _, k := range ks {
			if d.Grid[i*C+k] >= 0 {
				have++
				any = true
			}
		}
		if have == len(ks) {
			paired = append(paired, i)
		} else if any {
			oe.Dropped++
		}
	}
	if oe.Dropped > 0 {
		oe.DroppedNote = fmt.Sprintf("%d items lack a score in at least one open-ended config and are left out", oe.Dropped)
	}
	oe.Items = len(paired)
	for _, k := range ks {
		oe.Configs = append(oe.Configs, d.Configs[k].ID)
	}
	n := float64(len(paired))
	if len(paired) == 0 {
		return oe
	}
	s := func(i, k int) float64 { return *d.Recs[d.Grid[i*C+k]].Score }
	all := oeSummary(d, ks, paired)
	oe.MeanScore, oe.BestFixed, oe.BestConfig, oe.OracleMean, oe.OracleGap = all.MeanScore, all.BestFixed, all.BestConfig, all.OracleMean, all.OracleGap
	byCat, byDur := map[string][]int{}, map[string][]int{}
	for _, i := range paired {
		cat, dur := itemAttr(d, i, ks)
		if cat != "" {
			byCat[cat] = append(byCat[cat], i)
		}
		if dur != "" {
			byDur[dur] = append(byDur[dur], i)
		}
	}
	for c, its := range byCat {
		oe.Categories[c] = oeSummary(d, ks, its)
	}
	for du, its := range byDur {
		oe.Durations[du] = oeSummary(d, ks, its)
	}
	for _, a := range ks {
		for _, b := range ks {
			if !dataset.CostLess(d.Configs[a], d.Configs[b]) {
				continue
			}
			var reg, imp int
			var delta float64
			for _, i := range paired {
				sa, sb := s(i, a), s(i, b)
				delta += sb - sa
				if sb < sa-opt.Epsilon {
					reg++
				} else if sb > sa+opt.Epsilon {
					imp++
				}
			}
			oe.Regression = append(oe.Regression, OERegression{From: d.Configs[a].ID, To: d.Configs[b].ID,
				MeanChange: 100 * delta / n, RegressionRate: 100 * float64(reg) / n, ImprovedRate: 100 * float64(imp) / n})
		}
	}
	return oe
}
