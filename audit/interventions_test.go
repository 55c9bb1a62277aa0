package audit

import (
	"slices"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// Equal-cost configs are incomparable; the default policy picks the top; sampling recovery and iso-compute.
func TestTiesIsoAndSamplingRecovery(t *testing.T) {
	cfgs := []string{"c8", "a16", "b16"}
	metas := map[string]*record.ConfigMeta{
		"c8":  metaF(8, 100, 100, "uniform"),
		"a16": metaF(16, 100, 100, "uniform"),
		"b16": metaF(16, 100, 100, "random"),
	}
	pats := map[string]string{"j1": "101", "j2": "100", "j3": "001", "j4": "110"}
	res, err := Analyze(grid(cfgs, metas, pats, nil), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Pairs {
		if (p.From == "a16" && p.To == "b16") || (p.From == "b16" && p.To == "a16") {
			t.Errorf("equal-cost configs paired: %+v", p)
		}
	}
	if len(res.Pairs) != 2 {
		t.Errorf("pairs %+v", res.Pairs)
	}
	for _, p := range res.Pairs {
		if p.From == "c8" && p.To == "a16" && (p.Harmed != 2 || p.Rescued != 0 || p.McNemarP != 0.5) {
			t.Errorf("c8→a16 %+v", p)
		}
	}
	if res.TerminalConfig != "a16" {
		t.Errorf("terminal config %q", res.TerminalConfig)
	}
	near(t, "terminal", res.TerminalRegressionRate, 50)
	near(t, "confusion", res.VisualConfusionRate, 75)
	near(t, "sampling_recovery_rate", res.SamplingRecoveryRate, 50)
	if sr := res.SamplingRecovery; sr == nil || sr.TerminalRegressions != 2 || sr.Recovered != 1 || sr.ByAlternative["b16"] != 1 {
		t.Errorf("sampling recovery %+v", sr)
	}
	if len(res.IsoCompute) != 1 {
		t.Fatalf("iso groups %+v", res.IsoCompute)
	}
	g := res.IsoCompute[0]
	if g.Oracle != 75 || g.Accuracy["a16"] != 25 || g.Accuracy["b16"] != 50 || g.OnlyCorrect["a16"] != 1 || g.OnlyCorrect["b16"] != 2 {
		t.Errorf("iso group %+v", g)
	}
	// No text-only config: text metrics are null, not zero.
	if res.TextOverwriteRate != nil || res.TextCorrectItems != nil {
		t.Errorf("text metrics without a text config: %v %v", res.TextOverwriteRate, res.TextCorrectItems)
	}
}

func TestRerunsNoiseFloor(t *testing.T) {
	recs := coreRecords()
	base, err := Analyze(append([]record.Record(nil), recs...), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// Run 1 of f8 flips i1 and i2 (2 of the 7 items holding f8).
	flip := map[string]bool{"i1": true, "i2": true}
	n := len(recs)
	for i := 0; i < n; i++ {
		r := recs[i]
		if r.Config != "f8" {
			continue
		}
		r.Run = ip(1)
		c := *r.Correct != flip[r.ItemID]
		r.Correct = &c
		recs = append(recs, r)
	}
	res, err := Analyze(recs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if *res.OracleHeadroom != *base.OracleHeadroom || res.Accuracy["f8"] != base.Accuracy["f8"] {
		t.Errorf("reruns changed the main metrics")
	}
	if len(res.NoiseFloor) != 1 {
		t.Fatalf("noise floor %+v", res.NoiseFloor)
	}
	nf := res.NoiseFloor[0]
	if nf.Config != "f8" || nf.Pairs != 1 || *nf.MeanChurn != 2 {
		t.Errorf("noise floor %+v", nf)
	}
	near(t, "noise churn rate", nf.MeanChurnRate, 200.0/7)
	for _, c := range res.Configs {
		if c.ID == "f8" && c.Reruns != 1 {
			t.Errorf("f8 reruns %d", c.Reruns)
		}
	}
}

// Run pairs that share no item are not comparisons: they neither count as pairs nor pull the mean to 0.
func TestNoiseFloorSkipsDisjointRuns(t *testing.T) {
	rec := func(item string, run int, ok bool) record.Record {
		return record.Record{ItemID: item, Config: "f8", Run: ip(run), Correct: bp(ok), ConfigMeta: metaF(8, 10, 10, "uniform")}
	}
	recs := []record.Record{
		rec("a", 0, true), rec("b", 0, true), rec("c", 0, true), rec("d", 0, true),
		rec("a", 1, false), rec("b", 1, true), // run 1 vs 0: 1 of 2 items flips
		rec("c", 2, false), rec("d", 2, false), // run 2 vs 0: 2 of 2 flip; run 2 vs 1: no shared item
	}
	res, err := Analyze(recs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NoiseFloor) != 1 {
		t.Fatalf("noise floor %+v", res.NoiseFloor)
	}
	nf := res.NoiseFloor[0]
	if nf.Pairs != 2 || !slices.Equal(nf.Runs, []int{0, 1, 2}) {
		t.Errorf("noise floor %+v, want 2 compared pairs of runs 0,1,2", nf)
	}
	near(t, "mean churn", nf.MeanChurn, 1.5)
	near(t, "mean churn rate", nf.MeanChurnRate, (50.0+100)/2)
}

func TestPipelineFlipsAndLetterPrior(t *testing.T) {
	raw := &record.ConfigMeta{TextOnly: bp(true), Pipeline: "raw"}
	var recs []record.Record
	gold := []string{"A", "B", "A", "C"}
	rawOK := []bool{true, true, false, false}
	cachedOK := []bool{true, false, true, false}
	for i, g := range gold {
		it := string(rune('a' + i))
		recs = append(recs,
			record.Record{ItemID: it, Config: "text", Correct: bp(i%2 == 0), Prediction: "A", Answer: g, ConfigMeta: raw},
			record.Record{ItemID: it, Config: "r8", Correct: bp(rawOK[i]), Prediction: "(" + g + ")", Answer: g, ConfigMeta: &record.ConfigMeta{Frames: ip(8), Pipeline: "raw"}},
			record.Record{ItemID: it, Config: "k8", Correct: bp(cachedOK[i]), Prediction: "no idea", Answer: g, ConfigMeta: &record.ConfigMeta{Frames: ip(8), Pipeline: "cached"}})
	}
	res, err := Analyze(recs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.PipelineFlips) != 1 {
		t.Fatalf("flips %+v", res.PipelineFlips)
	}
	f := res.PipelineFlips[0]
	if f.Raw != "r8" || f.Cached != "k8" || f.Flips != 2 || f.RawOK != 1 || f.CachOK != 1 || f.Rate != 50 {
		t.Errorf("flip %+v", f)
	}
	lp := res.LetterPrior
	if lp == nil || lp.Gold["A"] != 50 || lp.Configs["text"]["A"] != 100 || lp.TVDistance["text"] != 50 || lp.TVDistance["r8"] != 0 || lp.Configs["k8"]["other"] != 100 {
		t.Errorf("letter prior %+v", lp)
	}
}
