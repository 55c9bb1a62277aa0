package cascade

import (
	"fmt"
	"sort"

	"github.com/framesweep/framesweep/record"
)

// ChooseThreshold chooses an online cascade's threshold on a previous full sweep's records (from
// names them in messages), as `framesweep cascade` does offline: the smallest-cost τ whose accuracy
// reaches the top budget's; with folds ≥ 2, the τ chosen on K−1 folds for each held-out fold, and
// their median. It returns τ and how it was chosen, in words (run.json's threshold_from).
func ChooseThreshold(recs []record.Record, from string, budgets []int, folds int) (float64, string, error) {
	cr, why, err := Offline(recs, Options{Budgets: budgets, Folds: folds}, DefaultSeed, DefaultPolicy)
	switch {
	case err != nil:
		return 0, "", err
	case cr == nil || cr.Items == 0:
		return 0, "", fmt.Errorf("%s: no cascade over %v: %s", from, budgets, why)
	}
	if folds >= 2 {
		var taus []float64
		for _, f := range cr.FoldResults {
			if f.Tau != nil {
				taus = append(taus, *f.Tau)
			}
		}
		if len(taus) == 0 {
			return 0, "", fmt.Errorf("%s: no fold reaches the reference accuracy", from)
		}
		sort.Float64s(taus)
		m := taus[len(taus)/2]
		if len(taus)%2 == 0 {
			m = (taus[len(taus)/2-1] + taus[len(taus)/2]) / 2
		}
		return m, fmt.Sprintf("median of the τ chosen on %d of %d folds (%d items)", len(taus), folds, cr.Items), nil
	}
	if cr.Selected == nil {
		return 0, "", fmt.Errorf("%s: no threshold reaches the accuracy of %s (%.1f points)", from, cr.Reference, cr.ReferenceAccuracy)
	}
	return cr.Selected.Tau, fmt.Sprintf("smallest-cost τ reaching %s's %.1f points on %d items", cr.Reference, cr.ReferenceAccuracy, cr.Items), nil
}

// Comparison is an online cascade RUN beside a full sweep of the same items (`framesweep
// cascade ONLINE_RUN --offline FULL_RUN --json`): the offline cascade replayed at the online
// threshold, the items whose stopping config differs, and the fixed top budget on the same items.
type Comparison struct {
	Online *Online `json:"online"`
	// With a full run: the cascade replayed at the same threshold on it, the items whose stopping
	// config differs, and each fixed budget on the same items.
	Offline       *Result  `json:"offline,omitempty"`
	Agree         *int     `json:"stops_agree,omitempty"`
	Disagree      []string `json:"stops_disagree,omitempty"` // "item: online config vs offline config"
	FixedTop      *Budget  `json:"fixed_top,omitempty"`
	FramesSaving  *float64 `json:"distinct_frames_saving,omitempty"` // % below the fixed top budget
	LatencySaving *float64 `json:"latency_saving,omitempty"`         // % below the fixed top budget's answer latency
}

// CompareOnline replays the offline cascade on full (a full sweep of the online run's ladder, named
// from in messages) at the online threshold and compares: every item the online run stopped must
// stop at the same config offline (Stops), and the savings are against the top budget.
func CompareOnline(oc *Online, online, full []record.Record, from string) (*Comparison, error) {
	rep := &Comparison{Online: oc}
	cr, why, err := Offline(full, Options{Budgets: oc.Budgets}, DefaultSeed, DefaultPolicy)
	if err != nil {
		return nil, err
	}
	if cr == nil || len(cr.Budgets) != len(oc.Budgets) {
		return nil, fmt.Errorf("%s: no cascade over %v: %s", from, oc.Budgets, why)
	}
	rep.Offline = cr
	var ladder []string
	for _, b := range cr.Budgets {
		ladder = append(ladder, b.Config)
	}
	stops, err := Stops(full, ladder, oc.Threshold)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	agree := 0
	for i := range online {
		r := &online[i]
		if r.Cascade == nil || !r.Cascade.Final || r.Failed() {
			continue
		}
		if s, ok := stops[r.ItemID]; ok && s == r.Config {
			agree++
		} else if ok {
			rep.Disagree = append(rep.Disagree, fmt.Sprintf("%s: online %s vs offline %s", r.ItemID, r.Config, s))
		}
	}
	rep.Agree = &agree
	top := cr.Budgets[len(cr.Budgets)-1]
	rep.FixedTop = &top
	if top.SharedFramesCost > 0 {
		v := 100 * (1 - oc.MeanFramesDistinct/top.SharedFramesCost)
		rep.FramesSaving = &v
	}
	if top.LatencyS != nil && *top.LatencyS > 0 && oc.MeanLatencyS > 0 {
		v := 100 * (1 - oc.MeanLatencyS / *top.LatencyS)
		rep.LatencySaving = &v
	}
	return rep, nil
}
