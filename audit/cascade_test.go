package audit

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func cascadeRecords(withLatency bool) []Record {
	type cell struct {
		conf float64
		ok   bool
	}
	items := map[string][3]cell{
		"A": {{0.9, true}, {0.5, true}, {0, true}},
		"B": {{0.3, false}, {0.6, true}, {0, false}},
		"C": {{0.6, false}, {0.4, false}, {0, true}},
	}
	lat := []float64{0.1, 0.2, 0.4}
	var recs []Record
	for _, it := range []string{"A", "B", "C"} {
		for k, f := range []int{8, 16, 32} {
			c := items[it][k]
			r := Record{ItemID: it, Config: []string{"f8", "f16", "f32"}[k], Correct: bp(c.ok), ConfigMeta: metaF(f, 10, 10, "uniform")}
			if k < 2 {
				r.Confidence = fp(c.conf)
			}
			if withLatency {
				r.LatencyS = fp(lat[k])
			}
			recs = append(recs, r)
		}
	}
	return recs
}

func TestCascadeSweep(t *testing.T) {
	opt := DefaultOptions()
	opt.Cascade.Budgets = []int{8, 16, 32}
	res, err := Analyze(cascadeRecords(true), opt)
	if err != nil {
		t.Fatal(err)
	}
	cr := res.Cascade
	if cr == nil || cr.Items != 3 || cr.Reference != "f32" || cr.SharedCostBasis != "nested assumption" {
		t.Fatalf("cascade %+v", cr)
	}
	want := []struct{ tau, acc, frames, shared, lat float64 }{
		{0.3, 100.0 / 3, 8, 8, 0.1},
		{0.4, 200.0 / 3, 40.0 / 3, 32.0 / 3, 0.5 / 3},
		{0.5, 200.0 / 3, 40.0 / 3, 32.0 / 3, 0.5 / 3},
		{0.6, 200.0 / 3, 40.0 / 3, 32.0 / 3, 0.5 / 3},
		{0.9, 200.0 / 3, 40, 24, (0.1 + 0.7 + 0.7) / 3},
		{math.Nextafter(0.9, 2), 200.0 / 3, 56, 32, 0.7},
	}
	if len(cr.Curve) != len(want) || cr.TauCount != len(want) {
		t.Fatalf("curve has %d points: %+v", len(cr.Curve), cr.Curve)
	}
	for i, w := range want {
		p := cr.Curve[i]
		if p.Tau != w.tau || math.Abs(p.Accuracy-w.acc) > 1e-9 || math.Abs(p.FramesCost-w.frames) > 1e-9 ||
			math.Abs(p.SharedFramesCost-w.shared) > 1e-9 || math.Abs(*p.LatencyS-w.lat) > 1e-9 {
			t.Errorf("τ=%v: %+v (latency %v), want %+v", w.tau, p, *p.LatencyS, w)
		}
	}
	near(t, "reference accuracy", fp(cr.ReferenceAccuracy), 200.0/3)
	if cr.Selected == nil || cr.Selected.Tau != 0.4 {
		t.Fatalf("selected %+v", cr.Selected)
	}
	near(t, "shared saving", cr.SharedCostSaving, 100*(1-(32.0/3)/32))
	// By latency: τ=0.3 (0.1 s) is below the reference accuracy; τ=0.4 (0.1667 s) is the fastest that reaches it.
	if cr.SelectedLatency == nil || cr.SelectedLatency.Tau != 0.4 {
		t.Fatalf("latency selection %+v", cr.SelectedLatency)
	}
	near(t, "latency saving", cr.LatencySaving, 100*(1-(0.5/3)/0.4))
	if len(cr.Budgets) != 3 || cr.Budgets[0].Accuracy != 100.0/3 || cr.Budgets[2].SharedFramesCost != 32 {
		t.Errorf("budgets %+v", cr.Budgets)
	}
}

func TestCascadeIndexSetsAndFolds(t *testing.T) {
	mk := func(it string, f int, idx []int, conf *float64, ok bool) Record {
		m := metaF(f, 10, 10, "uniform")
		m.Indices = idx
		return Record{ItemID: it, Config: map[int]string{2: "f2", 4: "f4"}[f], Correct: bp(ok), Confidence: conf, ConfigMeta: m}
	}
	recs := []Record{
		mk("x", 2, []int{0, 10}, fp(0.2), false),
		mk("x", 4, []int{1, 4, 7, 10}, nil, true),
	}
	opt := DefaultOptions()
	res, err := Analyze(recs, opt) // automatic budget choice: the only chain
	if err != nil {
		t.Fatal(err)
	}
	cr := res.Cascade
	if cr == nil || cr.SharedCostBasis != "index sets" || len(cr.Curve) != 2 {
		t.Fatalf("cascade %+v", cr)
	}
	if last := cr.Curve[1]; last.SharedFramesCost != 5 || last.FramesCost != 6 || cr.Curve[0].SharedFramesCost != 2 {
		t.Errorf("index-set costs %+v", cr.Curve)
	}
	// Folds on a larger synthetic set: every fold gets a τ chosen on the others, held-out items add up.
	opt.Cascade = CascadeOptions{Budgets: []int{16, 32, 64, 128}, Folds: 5}
	res, err = Analyze(Synthetic(600, 1), opt)
	if err != nil {
		t.Fatal(err)
	}
	cr = res.Cascade
	total := 0
	for _, f := range cr.FoldResults {
		total += f.Items
		if f.Tau == nil || *f.TrainAccuracy < 0 {
			t.Errorf("fold %+v", f)
		}
	}
	if len(cr.FoldResults) != 5 || total != cr.Items || cr.CrossFitted == nil {
		t.Errorf("folds %+v cross-fitted %+v", cr.FoldResults, cr.CrossFitted)
	}
	if cr.Selected == nil || cr.Selected.Accuracy < cr.ReferenceAccuracy {
		t.Errorf("selected %+v below reference %v", cr.Selected, cr.ReferenceAccuracy)
	}
}

func TestCascadeBadBudgets(t *testing.T) {
	opt := DefaultOptions()
	opt.Cascade.Budgets = []int{8, 24}
	recs := cascadeRecords(false)
	for i := range recs {
		recs[i].Source.Path = "run/records.jsonl"
	}
	if _, err := Analyze(recs, opt); !errors.Is(err, ErrBadArgs) || !strings.HasPrefix(err.Error(), "run/records.jsonl: ") {
		t.Errorf("unknown budget: %v", err)
	}
	opt.Cascade.Budgets = []int{16, 8}
	if _, err := Analyze(cascadeRecords(false), opt); !errors.Is(err, ErrBadArgs) {
		t.Errorf("decreasing budgets: %v", err)
	}
}
