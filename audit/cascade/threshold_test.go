package cascade

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

// TestChooseThreshold: on a full run, τ is the cascade's selection (the smallest-cost τ reaching the
// top budget's accuracy); with folds, the median of the folds' τ; a run without the ladder is an
// error naming it.
func TestChooseThreshold(t *testing.T) {
	recs := synth.Records(600, 1)
	budgets := []int{16, 32, 64, 128}
	tau, how, err := ChooseThreshold(recs, "full", budgets, 0)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := offline(recs, Options{Budgets: budgets})
	if err != nil || cr.Selected == nil || tau != cr.Selected.Tau || !strings.Contains(how, "f128") {
		t.Fatalf("τ %v (%s), cascade selected %+v %v", tau, how, cr.Selected, err)
	}
	tau5, how5, err := ChooseThreshold(recs, "full", budgets, 5)
	if err != nil {
		t.Fatal(err)
	}
	cr, _ = offline(recs, Options{Budgets: budgets, Folds: 5})
	var taus []float64
	for _, f := range cr.FoldResults {
		taus = append(taus, *f.Tau)
	}
	slices.Sort(taus)
	if len(taus) != 5 || tau5 != taus[2] || !strings.Contains(how5, "5 of 5 folds") {
		t.Fatalf("median τ %v (%s) of %v", tau5, how5, taus)
	}
	if _, _, err := ChooseThreshold(recs, "full", []int{16, 1000}, 0); err == nil || !strings.Contains(err.Error(), "1000") {
		t.Fatalf("a budget the run lacks: %v", err)
	}
}

// TestCompareOnline: an online run whose final records stop where the offline replay does agrees
// item for item; one item stopped elsewhere is named; the savings are against the top budget.
func TestCompareOnline(t *testing.T) {
	full := synth.Records(200, 3)
	ladder := []string{"f16", "f32", "f64", "f128"}
	const tau = 0.6
	stops, err := Stops(full, ladder, tau)
	if err != nil {
		t.Fatal(err)
	}
	// The online run as a sweep would write it: each item asked up its ladder until it stops.
	byPair := map[record.Pair]record.Record{}
	for _, r := range full {
		byPair[r.Key()] = r
	}
	var online []record.Record
	ids := make([]string, 0, len(stops))
	for id := range stops {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fed := 0
		for k, c := range ladder {
			r := byPair[record.Pair{Item: id, Config: c}]
			fed += []int{16, 32, 64, 128}[k]
			final := c == stops[id]
			r.Cascade = &record.CascadeStep{Threshold: tau, Budgets: []int{16, 32, 64, 128}, Step: k + 1, Final: final, FramesFed: fed, FramesDistinct: []int{16, 32, 64, 128}[k]}
			online = append(online, r)
			if final {
				r.Cascade.StoppedAt = []int{16, 32, 64, 128}[k]
				online[len(online)-1] = r
				break
			}
		}
	}
	oc, err := SummarizeOnline(online)
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := CompareOnline(oc, online, full, "full")
	if err != nil {
		t.Fatal(err)
	}
	if *cmp.Agree != len(stops) || len(cmp.Disagree) != 0 || cmp.FixedTop == nil || cmp.FixedTop.Config != "f128" || cmp.FramesSaving == nil {
		t.Fatalf("%+v", cmp)
	}
	if want := 100 * (1 - oc.MeanFramesDistinct/cmp.FixedTop.SharedFramesCost); math.Abs(*cmp.FramesSaving-want) > 1e-9 || *cmp.FramesSaving <= 0 {
		t.Fatalf("frames saving %v, want %v > 0", *cmp.FramesSaving, want)
	}
	// One item's final record moved to another config: named as a disagreement.
	for i := range online {
		if online[i].Cascade.Final {
			online[i].Config = map[bool]string{true: "f16", false: "f128"}[online[i].Config != "f16"]
			break
		}
	}
	cmp, err = CompareOnline(oc, online, full, "full")
	if err != nil || *cmp.Agree != len(stops)-1 || len(cmp.Disagree) != 1 || !strings.Contains(cmp.Disagree[0], "online") {
		t.Fatalf("%+v %v", cmp, err)
	}
}
