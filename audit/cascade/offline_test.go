package cascade

import (
	"errors"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/internal/splitmix"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

// ptr is a pointer to a copy of v, for the record's optional fields.
func ptr[T any](v T) *T { return &v }

// meta is the config_meta of a uniform 10×10 budget.
func meta(frames int) *record.ConfigMeta {
	return &record.ConfigMeta{Frames: &frames, Width: ptr(10), Height: ptr(10), Policy: "uniform"}
}

// within fails the test unless got is set and within 1e-9 of want.
func within(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil || math.Abs(*got-want) > 1e-9 {
		t.Errorf("%s = %v, want %.9f", what, got, want)
	}
}

func offline(recs []record.Record, co Options) (*Result, error) {
	cr, _, err := Offline(recs, co, DefaultSeed, DefaultPolicy)
	return cr, err
}

// cascadeRecords: three items over f8, f16, f32, each path of METRICS.md's rule (confident early,
// escalating to a rescue, escalating past a right answer).
func cascadeRecords(withLatency bool) []record.Record {
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
	var recs []record.Record
	for _, it := range []string{"A", "B", "C"} {
		for k, f := range []int{8, 16, 32} {
			c := items[it][k]
			r := record.Record{ItemID: it, Config: []string{"f8", "f16", "f32"}[k], Correct: ptr(c.ok), ConfigMeta: meta(f)}
			if k < 2 {
				r.Confidence = ptr(c.conf)
			}
			if withLatency {
				r.LatencyS = ptr(lat[k])
			}
			recs = append(recs, r)
		}
	}
	return recs
}

// TestSweep: the τ sweep by hand on three items: every curve point, the selection by shared frames and
// by latency, the savings and the fixed budgets.
func TestSweep(t *testing.T) {
	cr, err := offline(cascadeRecords(true), Options{Budgets: []int{8, 16, 32}})
	if err != nil {
		t.Fatal(err)
	}
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
	within(t, "reference accuracy", &cr.ReferenceAccuracy, 200.0/3)
	if cr.Selected == nil || cr.Selected.Tau != 0.4 {
		t.Fatalf("selected %+v", cr.Selected)
	}
	within(t, "shared saving", cr.SharedCostSaving, 100*(1-(32.0/3)/32))
	// By latency: τ=0.3 (0.1 s) is below the reference accuracy; τ=0.4 (0.1667 s) is the fastest that reaches it.
	if cr.SelectedLatency == nil || cr.SelectedLatency.Tau != 0.4 {
		t.Fatalf("latency selection %+v", cr.SelectedLatency)
	}
	within(t, "latency saving", cr.LatencySaving, 100*(1-(0.5/3)/0.4))
	if len(cr.Budgets) != 3 || cr.Budgets[0].Accuracy != 100.0/3 || cr.Budgets[2].SharedFramesCost != 32 {
		t.Errorf("budgets %+v", cr.Budgets)
	}
}

// TestCheck: a cascade over some item is no error; one that could not run says why, one over no item
// adds what it dropped, both naming the inputs.
func TestCheck(t *testing.T) {
	if err := Check(&Result{Items: 1}, "", "in"); err != nil {
		t.Errorf("one item: %v", err)
	}
	if err := Check(nil, "no chain", "a,b"); err == nil || err.Error() != "a,b: no chain" {
		t.Errorf("nil: %v", err)
	}
	if err := Check(&Result{DroppedReason: "3 items lack a record"}, "none left", "in"); err == nil || err.Error() != "in: none left (3 items lack a record)" {
		t.Errorf("empty: %v", err)
	}
}

// TestIndexSetsAndFolds: shared frames from the records' index sets; with folds, every fold gets a τ
// chosen on the others.
func TestIndexSetsAndFolds(t *testing.T) {
	mk := func(it string, f int, idx []int, conf *float64, ok bool) record.Record {
		m := meta(f)
		m.Indices = idx
		return record.Record{ItemID: it, Config: map[int]string{2: "f2", 4: "f4"}[f], Correct: ptr(ok), Confidence: conf, ConfigMeta: m}
	}
	recs := []record.Record{
		mk("x", 2, []int{0, 10}, ptr(0.2), false),
		mk("x", 4, []int{1, 4, 7, 10}, nil, true),
	}
	cr, err := offline(recs, Options{}) // automatic budget choice: the only chain
	if err != nil {
		t.Fatal(err)
	}
	if cr == nil || cr.SharedCostBasis != "index sets" || len(cr.Curve) != 2 {
		t.Fatalf("cascade %+v", cr)
	}
	if last := cr.Curve[1]; last.SharedFramesCost != 5 || last.FramesCost != 6 || cr.Curve[0].SharedFramesCost != 2 {
		t.Errorf("index-set costs %+v", cr.Curve)
	}
	// Folds on a larger synthetic set: every fold gets a τ chosen on the others, held-out items add up.
	cr, err = offline(synth.Records(600, 1), Options{Budgets: []int{16, 32, 64, 128}, Folds: 5})
	if err != nil {
		t.Fatal(err)
	}
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

// TestBadBudgets: a budget no config has, or budgets that do not increase, are ErrBadArgs naming the
// records' file.
func TestBadBudgets(t *testing.T) {
	recs := cascadeRecords(false)
	for i := range recs {
		recs[i].Source.Path = "run/records.jsonl"
	}
	if _, err := offline(recs, Options{Budgets: []int{8, 24}}); !errors.Is(err, dataset.ErrBadArgs) || !strings.HasPrefix(err.Error(), "run/records.jsonl: ") {
		t.Errorf("unknown budget: %v", err)
	}
	if _, err := offline(cascadeRecords(false), Options{Budgets: []int{16, 8}}); !errors.Is(err, dataset.ErrBadArgs) {
		t.Errorf("decreasing budgets: %v", err)
	}
	if _, err := offline(cascadeRecords(false), Options{Folds: 1 << 30}); !errors.Is(err, dataset.ErrBadArgs) || !strings.Contains(err.Error(), "folds 1073741824: out of range") {
		t.Errorf("folds: %v", err)
	}
}

// TestMatchesSimulation checks the event sweep against a direct simulation of METRICS.md's rule
// at every τ (confidences rounded to 0.05 so ties and equal consecutive confidences are common), the
// selection rule, and each fold's τ chosen on the other folds and scored on its own items.
func TestMatchesSimulation(t *testing.T) {
	recs := synth.Records(300, 7)
	for i := range recs {
		c := math.Round(*recs[i].Confidence*20) / 20
		recs[i].Confidence = &c
	}
	budgets := []int{8, 16, 32, 64, 128}
	cr, err := offline(recs, Options{Budgets: budgets, Folds: 4, MaxCurve: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	type item struct {
		conf, lat []float64
		ok        []bool
	}
	byID := map[string]*item{}
	var ids []string
	cfgPos := map[string]int{"f8": 0, "f16": 1, "f32": 2, "f64": 3, "f128": 4}
	for _, r := range recs {
		j, ok := cfgPos[r.Config]
		if !ok {
			continue
		}
		it := byID[r.ItemID]
		if it == nil {
			it = &item{conf: make([]float64, 5), lat: make([]float64, 5), ok: make([]bool, 5)}
			byID[r.ItemID] = it
			ids = append(ids, r.ItemID)
		}
		it.conf[j], it.lat[j], it.ok[j] = *r.Confidence, *r.LatencyS, *r.Correct
	}
	slices.Sort(ids)
	tauSet := map[float64]bool{}
	for _, it := range byID {
		for _, c := range it.conf[:4] {
			tauSet[c] = true
		}
	}
	var taus []float64
	for c := range tauSet {
		taus = append(taus, c)
	}
	slices.Sort(taus)
	taus = append(taus, math.Nextafter(taus[len(taus)-1], 2))
	// sim runs the cascade at τ over items: correct count, Σ frames, Σ shared (nested: last budget), Σ latency.
	sim := func(tau float64, items []string) (ok, frames, shared int, lat float64) {
		for _, id := range items {
			it := byID[id]
			s := 0
			for s < 4 && it.conf[s] < tau {
				s++
			}
			for j := 0; j <= s; j++ {
				frames += budgets[j]
				lat += it.lat[j]
			}
			shared += budgets[s]
			ok += b2i(it.ok[s])
		}
		return
	}
	if cr.Items != len(ids) || len(cr.Curve) != len(taus) {
		t.Fatalf("%d items, %d curve points; want %d, %d", cr.Items, len(cr.Curve), len(ids), len(taus))
	}
	n := float64(len(ids))
	for i, tau := range taus {
		ok, frames, shared, lat := sim(tau, ids)
		p := cr.Curve[i]
		if p.Tau != tau || math.Abs(p.Accuracy-100*float64(ok)/n) > 1e-9 || math.Abs(p.FramesCost-float64(frames)/n) > 1e-9 ||
			math.Abs(p.SharedFramesCost-float64(shared)/n) > 1e-9 || math.Abs(*p.LatencyS-lat/n) > 1e-9 {
			t.Fatalf("τ=%v: %+v, simulation gives ok %d frames %d shared %d latency %v", tau, p, ok, frames, shared, lat)
		}
	}
	// choose applies the selection rule on items: smallest shared cost with correct ≥ the reference's
	// (the largest budget), ties → more correct, then smaller τ.
	choose := func(items []string) (float64, bool) {
		ref := 0
		for _, id := range items {
			ref += b2i(byID[id].ok[4])
		}
		best, bestOK, bestShared, have := 0.0, 0, 0, false
		for _, tau := range taus {
			ok, _, shared, _ := sim(tau, items)
			if ok >= ref && (!have || shared < bestShared || (shared == bestShared && ok > bestOK)) {
				best, bestOK, bestShared, have = tau, ok, shared, true
			}
		}
		return best, have
	}
	if tau, have := choose(ids); !have || cr.Selected == nil || cr.Selected.Tau != tau {
		t.Errorf("selected %+v, simulation picks τ=%v (%v)", cr.Selected, tau, have)
	}
	// Folds: the documented shuffle (Fisher–Yates from the end, j = Intn(i+1)), fold = position mod K.
	perm := make([]int, len(ids))
	for i := range perm {
		perm[i] = i
	}
	h := fnv.New64a()
	h.Write([]byte("cascade-folds"))
	g := splitmix.Source{State: DefaultSeed ^ h.Sum64()}
	for i := len(perm) - 1; i > 0; i-- {
		j := g.Intn(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	folds := make([][]string, 4)
	for pos, ii := range perm {
		folds[pos%4] = append(folds[pos%4], ids[ii])
	}
	for f, fr := range cr.FoldResults {
		var train []string
		for g := range folds {
			if g != f {
				train = append(train, folds[g]...)
			}
		}
		tau, have := choose(train)
		if !have || fr.Tau == nil || *fr.Tau != tau || fr.Items != len(folds[f]) {
			t.Errorf("fold %d: %+v, simulation picks τ=%v (%v) over %d held-out items", f, fr, tau, have, len(folds[f]))
			continue
		}
		ok, _, shared, _ := sim(tau, folds[f])
		m := float64(len(folds[f]))
		if math.Abs(*fr.HeldoutAccuracy-100*float64(ok)/m) > 1e-9 || math.Abs(*fr.HeldoutShared-float64(shared)/m) > 1e-9 {
			t.Errorf("fold %d held out: %+v, simulation ok %d shared %d", f, fr, ok, shared)
		}
	}
}
