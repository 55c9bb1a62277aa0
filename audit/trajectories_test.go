package audit

import (
	"slices"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// TestTrajectoriesMatchTheAudit: every model's trajectories (AllTrajectories) tag exactly the items
// its audit counts: confused items = the confusion rate × items, over the matched grid; the rescued
// and harmed transitions add up to the audit's transitions. The records are of two tasks: each
// task's trajectories are those of its own audit (tasks).
func TestTrajectoriesMatchTheAudit(t *testing.T) {
	recs := threeModels()
	opt := ModelsOptions{Options: DefaultOptions(), Ceilings: map[string]int{"gamma": 64}}
	opt.Resamples = 0
	res, err := AnalyzeModels(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := AllTrajectories(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 6 {
		t.Fatalf("%d trajectory sets, want 3 models × 2 tasks", len(sets))
	}
	for _, s := range sets {
		r := res.Tasks[s.Task].PerModel[s.Model]
		var ids []string
		for _, c := range s.Set.MC {
			ids = append(ids, c.ID)
		}
		if !slices.Equal(ids, r.MCConfigs) {
			t.Fatalf("%s: trajectory configs %v, audit %v", s.Model, ids, r.MCConfigs)
		}
		confused, paired := 0, 0
		rescued := make([]int, len(r.Transitions))
		harmed := make([]int, len(r.Transitions))
		for _, it := range s.Set.Items {
			if !it.Paired {
				continue
			}
			paired++
			confused += b2i(it.Tags.Confused)
			for _, k := range it.Rescued {
				rescued[k]++
			}
			for _, k := range it.Harmed {
				harmed[k]++
			}
		}
		if paired != r.Items || float64(confused) != *r.VisualConfusionRate*float64(r.Items)/100 {
			t.Errorf("%s: %d paired, %d confused; audit %d items at %v%%", s.Model, paired, confused, r.Items, *r.VisualConfusionRate)
		}
		for k, tr := range r.Transitions {
			if rescued[k] != tr.Rescued || harmed[k] != tr.Harmed {
				t.Errorf("%s %s→%s: +%d −%d, audit +%d −%d", s.Model, tr.From, tr.To, rescued[k], harmed[k], tr.Rescued, tr.Harmed)
			}
		}
	}
}

// TestDropOverCeiling: a one-model audit given a ceiling leaves out the configs with more frames.
func TestDropOverCeiling(t *testing.T) {
	var alpha []record.Record
	for _, r := range threeModels() {
		if r.Model == "alpha" {
			alpha = append(alpha, r)
		}
	}
	kept, dropped, err := DropOverCeiling(alpha, 32)
	if err != nil || !slices.Equal(dropped, []string{"f128", "f64"}) {
		t.Fatalf("dropped %v %v", dropped, err)
	}
	for _, r := range kept {
		if r.Config == "f64" || r.Config == "f128" {
			t.Fatalf("kept %s", r.Config)
		}
	}
	if len(kept) != len(alpha)-120 {
		t.Errorf("kept %d of %d", len(kept), len(alpha))
	}
}
