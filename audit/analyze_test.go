package audit

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/big"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/internal/splitmix"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

func ip(v int) *int         { return &v }
func bp(v bool) *bool       { return &v }
func fp(v float64) *float64 { return &v }
func metaF(frames, w, h int, policy string) *record.ConfigMeta {
	return &record.ConfigMeta{Frames: ip(frames), Width: ip(w), Height: ip(h), Policy: policy}
}

// grid builds multiple-choice records from patterns: pats[item] is one char per config ('1','0', '-' = no record).
func grid(cfgs []string, metas map[string]*record.ConfigMeta, pats map[string]string, cats map[string]string) []record.Record {
	var out []record.Record
	line := 0
	for _, it := range sortedKeys(pats) {
		for k, c := range cfgs {
			ch := pats[it][k]
			if ch == '-' {
				continue
			}
			line++
			r := record.Record{ItemID: it, Config: c, Correct: bp(ch == '1'), ConfigMeta: metas[c], Category: cats[it], Duration: "short",
				Source: record.Source{Path: "mem.jsonl", Line: line}}
			out = append(out, r)
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	for i := range k {
		for j := i + 1; j < len(k); j++ {
			if k[j] < k[i] {
				k[i], k[j] = k[j], k[i]
			}
		}
	}
	return k
}

func near(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = null, want %.6f", name, want)
		return
	}
	if math.Abs(*got-want) > 1e-9 {
		t.Errorf("%s = %.9f, want %.9f", name, *got, want)
	}
}

func coreRecords() []record.Record {
	cfgs := []string{"text", "f8", "f16", "f32"}
	metas := map[string]*record.ConfigMeta{
		"text": {TextOnly: bp(true)},
		"f8":   metaF(8, 100, 100, "uniform"),
		"f16":  metaF(16, 100, 100, "uniform"),
		"f32":  metaF(32, 100, 100, "uniform"),
	}
	pats := map[string]string{
		"i1": "1111", "i2": "0011", "i3": "1000", "i4": "0101", "i5": "0110", "i6": "0000",
		"i7": "110-", // missing f32: dropped
	}
	cats := map[string]string{"i1": "Counting", "i2": "Counting", "i3": "Counting", "i4": "OCR", "i5": "OCR", "i6": "OCR", "i7": "Empty"}
	return grid(cfgs, metas, pats, cats)
}

func TestCoreMetrics(t *testing.T) {
	opt := DefaultOptions()
	opt.Resamples = 200
	res, err := Analyze(coreRecords(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Items != 6 || res.DroppedItems.Count != 1 || res.DroppedItems.MissingByConfig["f32"] != 1 || res.DroppedItems.TotalItems != 7 {
		t.Fatalf("items %d dropped %+v", res.Items, res.DroppedItems)
	}
	if !strings.Contains(res.DroppedItems.Reason, "1 lack config f32") {
		t.Errorf("reason %q", res.DroppedItems.Reason)
	}
	wantAcc := map[string]float64{"text": 100.0 / 3, "f8": 50, "f16": 50, "f32": 50}
	for c, w := range wantAcc {
		g := res.Accuracy[c]
		near(t, "accuracy["+c+"]", &g, w)
	}
	near(t, "best_fixed", res.BestFixed, 50)
	if res.BestFixedConfig != "f8" { // tie at 50: lowest cost wins
		t.Errorf("best_fixed_config %q, want f8", res.BestFixedConfig)
	}
	near(t, "oracle_accuracy", res.OracleAccuracy, 500.0/6)
	near(t, "oracle_headroom", res.OracleHeadroom, 500.0/6-50)
	near(t, "visual_confusion_rate", res.VisualConfusionRate, 50)
	near(t, "visual_confusion_rate_visual_only", res.VisualConfusionRateVisualOnly, 100.0/3)
	near(t, "terminal_regression_rate", res.TerminalRegressionRate, 100.0/3)
	if res.TerminalConfig != "f32" {
		t.Errorf("terminal config %q", res.TerminalConfig)
	}
	near(t, "text_overwrite_rate", res.TextOverwriteRate, 100.0/6)
	near(t, "text_overwrite_rate_of_text_correct", res.TextOverwriteRateOfTextCorrect, 50)
	near(t, "text_overwrite_all_visual_rate", res.TextOverwriteAllVisualRate, 100.0/6)
	near(t, "unstable_rate", res.UnstableRate, 400.0/6)
	type pw struct {
		r, h int
		adj  bool
		p    float64
	}
	want := map[string]pw{
		"text>f8": {2, 1, true, 1}, "f8>f16": {1, 1, true, 1}, "f16>f32": {1, 1, true, 1},
		"f8>f32": {1, 1, false, 1}, "text>f16": {2, 1, false, 1}, "text>f32": {2, 1, false, 1},
	}
	if len(res.Pairs) != len(want) {
		t.Fatalf("%d pairs, want %d: %+v", len(res.Pairs), len(want), res.Pairs)
	}
	for _, p := range res.Pairs {
		w, ok := want[p.From+">"+p.To]
		if !ok {
			t.Errorf("unexpected pair %s→%s", p.From, p.To)
			continue
		}
		if p.Rescued != w.r || p.Harmed != w.h || p.Churn != w.r+w.h || p.Adjacent != w.adj || p.McNemarP != w.p {
			t.Errorf("pair %s→%s = %+v, want %+v", p.From, p.To, p, w)
		}
		net, sc := p.Net, p.StateChangeRate
		near(t, "net "+p.From+">"+p.To, &net, 100*float64(w.r-w.h)/6)
		near(t, "state_change "+p.From+">"+p.To, &sc, 100*float64(w.r+w.h)/6)
	}
	// Per category: Counting = {1111, 0011, 1000}.
	cm := res.Categories["Counting"]
	if cm == nil || cm.Items != 3 {
		t.Fatalf("Counting: %+v", cm)
	}
	near(t, "Counting best_fixed", cm.BestFixed, 200.0/3)
	if cm.BestFixedConfig != "text" { // text, f16, f32 tie at 66.7; text costs 0
		t.Errorf("Counting best config %q", cm.BestFixedConfig)
	}
	near(t, "Counting oracle", cm.OracleAccuracy, 100)
	near(t, "Counting confusion", cm.VisualConfusionRate, 100.0/3)
	// An empty category (its only item was dropped) is reported with no items and null metrics.
	em := res.Categories["Empty"]
	if em == nil || em.Items != 0 || em.BestFixed != nil || em.OracleHeadroomCI != nil || len(em.Pairs) != 0 {
		t.Errorf("Empty category: %+v", em)
	}
	if d := res.Durations["short"]; d == nil || d.Items != 6 {
		t.Errorf("duration short: %+v", d)
	}
	ci := res.OracleHeadroomCI
	if ci == nil || ci.Lo > *res.OracleHeadroom || ci.Hi < *res.OracleHeadroom || ci.Lo >= ci.Hi {
		t.Errorf("headroom CI %+v around %v", ci, *res.OracleHeadroom)
	}
	if tr := res.Transitions; len(tr) != 3 || tr[0] != (Transition{From: "text", To: "f8", Ordered: true, BothCorrect: 1, Rescued: 2, Harmed: 1, BothWrong: 2}) {
		t.Errorf("transitions %+v", tr)
	}
	if len(res.Patterns) != 6 || res.Patterns[0].Count != 1 {
		t.Errorf("patterns %+v", res.Patterns)
	}
}

func TestBootstrapDeterministic(t *testing.T) {
	opt := DefaultOptions()
	a, err := Analyze(coreRecords(), opt)
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	b, err := Analyze(coreRecords(), opt)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if *a.OracleHeadroomCI != *b.OracleHeadroomCI || *a.VisualConfusionRateCI != *b.VisualConfusionRateCI {
		t.Errorf("intervals depend on worker count: %+v vs %+v", a.OracleHeadroomCI, b.OracleHeadroomCI)
	}
	opt.Seed = 99
	c, _ := Analyze(coreRecords(), opt)
	if c.Bootstrap.Seed != 99 || a.Bootstrap.Seed != 1 || a.Bootstrap.Resamples != 1000 {
		t.Errorf("bootstrap info %+v %+v", a.Bootstrap, c.Bootstrap)
	}
}

func TestMcNemarExact(t *testing.T) {
	cases := []struct {
		b, c int
		want float64
	}{{0, 0, 1}, {3, 3, 1}, {0, 5, 0.0625}, {5, 0, 0.0625}, {1, 5, 0.21875}, {2, 1, 1}, {0, 2, 0.5}, {13, 14, 1}, {14, 13, 1}}
	for _, tc := range cases {
		if got := McNemarExact(tc.b, tc.c); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("McNemarExact(%d,%d) = %v, want %v", tc.b, tc.c, got, tc.want)
		}
	}
	// Against exact rational arithmetic for a larger table.
	b, c := 40, 60
	sum := new(big.Int)
	for i := 0; i <= b; i++ {
		sum.Add(sum, new(big.Int).Binomial(int64(b+c), int64(i)))
	}
	r := new(big.Rat).SetFrac(new(big.Int).Mul(sum, big.NewInt(2)), new(big.Int).Lsh(big.NewInt(1), uint(b+c)))
	want, _ := r.Float64()
	if got := McNemarExact(b, c); math.Abs(got-want) > 1e-12*want {
		t.Errorf("McNemarExact(40,60) = %v, want %v", got, want)
	}
}

func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	if p := Percentile(v, 0.5); p != 2.5 {
		t.Errorf("median %v", p)
	}
	if p := Percentile(v, 0.025); math.Abs(p-1.075) > 1e-12 {
		t.Errorf("p2.5 %v", p)
	}
}

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

func TestTopTieWithoutDefaultIsUndefined(t *testing.T) {
	metas := map[string]*record.ConfigMeta{"c8": metaF(8, 10, 10, "uniform"), "x": metaF(16, 10, 10, "random"), "y": metaF(16, 10, 10, "dense-start")}
	res, err := Analyze(grid([]string{"c8", "x", "y"}, metas, map[string]string{"a": "100", "b": "011"}, nil), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminalRegressionRate != nil || len(res.Notes) == 0 {
		t.Errorf("terminal %v notes %v", res.TerminalRegressionRate, res.Notes)
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

func TestRecordErrors(t *testing.T) {
	recs := coreRecords()
	recs = append(recs, recs[0])
	recs[len(recs)-1].Source.Line = 99
	_, err := Analyze(recs, DefaultOptions())
	var ae *record.Error
	if !errors.Is(err, record.ErrDuplicate) || !errors.As(err, &ae) || ae.Line != 99 || !strings.Contains(err.Error(), "mem.jsonl:99") {
		t.Errorf("duplicate: %v", err)
	}
	cases := []struct {
		in   string
		want error
	}{
		{`{"item_id":"a","config":"x"}`, record.ErrInvalid},
		{`{"item_id":"a","config":"x","correct":true,"score":0.5}`, record.ErrInvalid},
		{`{"item_id":"a","config":"x","score":1.5}`, record.ErrInvalid},
		{`{"item_id":"a","config":"x","correct":true,"confidence":-0.1}`, record.ErrInvalid},
		{`{"item_id":"","config":"x","correct":true}`, record.ErrInvalid},
		{`{"item_id":"a","config":"x","correct":"yes"}`, record.ErrSyntax},
		{`{"item_id":"a"`, record.ErrSyntax},
		{`{"item_id":"a","config":"x","correct":true} {}`, record.ErrSyntax},
		{`null`, record.ErrInvalid},
	}
	for _, tc := range cases {
		_, err := record.Read(strings.NewReader("\n"+tc.in+"\n"), "bad.jsonl")
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "bad.jsonl:2") {
			t.Errorf("%s: got %v, want %v at line 2", tc.in, err, tc.want)
		}
	}
	conflict := `{"item_id":"a","config":"x","correct":true,"config_meta":{"frames":8}}
{"item_id":"b","config":"x","correct":true,"config_meta":{"frames":16}}`
	rs, err := record.Read(strings.NewReader(conflict), "c.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Analyze(rs, DefaultOptions()); !errors.Is(err, record.ErrConflict) || !strings.Contains(err.Error(), "c.jsonl:2") {
		t.Errorf("conflict: %v", err)
	}
	// Text-only and frames must agree, on one record or across two.
	for name, in := range map[string]string{
		"visual with 0 frames": `{"item_id":"a","config":"x","correct":true,"config_meta":{"frames":0,"text_only":false}}`,
		"text-only, then frames": `{"item_id":"a","config":"x","correct":true,"config_meta":{"text_only":true}}
{"item_id":"b","config":"x","correct":true,"config_meta":{"frames":16}}`,
		"0 frames, then visual": `{"item_id":"a","config":"x","correct":true,"config_meta":{"frames":0}}
{"item_id":"b","config":"x","correct":true,"config_meta":{"text_only":false}}`,
	} {
		rs, err := record.Read(strings.NewReader(in), "t.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Analyze(rs, DefaultOptions()); !errors.Is(err, record.ErrConflict) || !strings.Contains(err.Error(), "t.jsonl:") {
			t.Errorf("%s: %v", name, err)
		}
	}
	mixed := `{"item_id":"a","config":"x","correct":true}
{"item_id":"b","config":"x","score":0.5}`
	if rs, err = record.Read(strings.NewReader(mixed), "m.jsonl"); err != nil {
		t.Fatal(err)
	}
	if _, err := Analyze(rs, DefaultOptions()); !errors.Is(err, record.ErrInvalid) {
		t.Errorf("mixed kinds: %v", err)
	}
	if _, err := record.Read(strings.NewReader(strings.Repeat("x", record.MaxLineBytes+10)), "long.jsonl"); !errors.Is(err, record.ErrTooLong) {
		t.Errorf("long line: %v", err)
	}
}

func TestOpenEnded(t *testing.T) {
	var recs []record.Record
	scores := map[string][2]float64{"q1": {0.5, 0.9}, "q2": {0.8, 0.2}, "q3": {1, 1}}
	for _, it := range []string{"q1", "q2", "q3"} {
		for k, c := range []string{"o8", "o16"} {
			cat := "A"
			if it == "q3" {
				cat = "B"
			}
			recs = append(recs, record.Record{ItemID: it, Config: c, Score: fp(scores[it][k]), ConfigMeta: &record.ConfigMeta{Frames: ip(8 << k)}, Category: cat})
		}
	}
	recs = append(recs, record.Record{ItemID: "q4", Config: "o8", Score: fp(0.1)}) // missing o16: dropped
	res, err := Analyze(recs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	oe := res.OpenEnded
	if oe == nil || oe.Items != 3 || oe.Dropped != 1 {
		t.Fatalf("open-ended %+v", oe)
	}
	near(t, "mean o8", fp(oe.MeanScore["o8"]), 230.0/3)
	near(t, "mean o16", fp(oe.MeanScore["o16"]), 70)
	near(t, "oracle mean", fp(oe.OracleMean), 90)
	near(t, "oracle gap", fp(oe.OracleGap), 90-230.0/3)
	if oe.BestConfig != "o8" || len(oe.Regression) != 1 {
		t.Fatalf("best %q regressions %+v", oe.BestConfig, oe.Regression)
	}
	r := oe.Regression[0]
	near(t, "regression rate", fp(r.RegressionRate), 100.0/3)
	near(t, "improved rate", fp(r.ImprovedRate), 100.0/3)
	near(t, "mean change", fp(r.MeanChange), -20.0/3)
	// Category A = {q1, q2}: o8 mean 65, o16 55, oracle (0.9+0.8)/2 = 85, gap 20.
	if a := oe.Categories["A"]; a == nil || a.Items != 2 || math.Abs(a.OracleGap-20) > 1e-9 || a.BestConfig != "o8" || oe.Categories["B"].Items != 1 {
		t.Errorf("open-ended categories %+v", oe.Categories)
	}
	if res.Items != 0 || res.BestFixed != nil {
		t.Errorf("no multiple-choice configs, yet items=%d", res.Items)
	}
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

// Without frames in config_meta, costs are unknown: nothing is ordered, so confusion and pairs are
// undefined (null, empty), while accuracy and the oracle still hold.
func TestUnknownCosts(t *testing.T) {
	res, err := Analyze(grid([]string{"a", "b"}, nil, map[string]string{"x": "10", "y": "01", "z": "11"}, nil), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.VisualConfusionRate != nil || res.VisualConfusionRateCI != nil || len(res.Pairs) != 0 || res.TerminalRegressionRate != nil {
		t.Errorf("ordered metrics without costs: %v %v %v", res.VisualConfusionRate, res.Pairs, res.TerminalRegressionRate)
	}
	near(t, "oracle", res.OracleAccuracy, 100)
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "--frames") {
		t.Errorf("notes %v", res.Notes)
	}
}

func TestTooManyConfigs(t *testing.T) {
	var recs []record.Record
	for k := 0; k <= dataset.MaxConfigs; k++ {
		recs = append(recs, record.Record{ItemID: "a", Config: fmt.Sprint("c", k), Correct: bp(true)})
	}
	if _, err := Analyze(recs, DefaultOptions()); !errors.Is(err, ErrBadArgs) {
		t.Errorf("got %v", err)
	}
}

// TestOptionRanges: resamples, epsilon and folds out of range are refused by name before any work
// (10^9 resamples from a hostile export.json once grew memory at ~150 MiB/s; a NaN epsilon passed
// "epsilon < 0").
func TestOptionRanges(t *testing.T) {
	recs := synth.Records(40, 1)
	for _, c := range []struct {
		set  func(*Options)
		want string
	}{
		{func(o *Options) { o.Resamples = 1000000000 }, "resamples 1000000000: out of range (want 0..100000)"},
		{func(o *Options) { o.Resamples = -1 }, "resamples -1: out of range"},
		{func(o *Options) { o.Epsilon = math.NaN() }, "epsilon NaN: not a number"},
		{func(o *Options) { o.Epsilon = math.Inf(1) }, "epsilon +Inf: not finite"},
		{func(o *Options) { o.Cascade.Folds = 1 << 30 }, "folds 1073741824: out of range (want 0..10000)"},
	} {
		opt := DefaultOptions()
		c.set(&opt)
		start := time.Now()
		_, err := Analyze(recs, opt)
		if !errors.Is(err, ErrBadArgs) || !strings.Contains(err.Error(), c.want) || time.Since(start) > 10*time.Second {
			t.Errorf("%v after %v, want %q", err, time.Since(start), c.want)
		}
	}
}

func TestDocHashDrift(t *testing.T) {
	recs := grid([]string{"a", "b"}, map[string]*record.ConfigMeta{"a": {Frames: ip(8)}, "b": {Frames: ip(16)}}, map[string]string{"x": "10", "y": "11"}, nil)
	for i := range recs {
		recs[i].DocHash = "h-" + recs[i].ItemID
		if recs[i].ItemID == "y" && recs[i].Config == "b" {
			recs[i].DocHash = "changed"
		}
	}
	res, err := Analyze(recs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range res.Notes {
		found = found || strings.Contains(n, "1 items have different doc_hash")
	}
	if !found {
		t.Errorf("notes %v", res.Notes)
	}
}

func TestDuplicateRerunAfterLowerRun(t *testing.T) {
	mk := func(run, line int) record.Record {
		return record.Record{ItemID: "a", Config: "x", Correct: bp(true), Run: ip(run), Source: record.Source{Path: "r.jsonl", Line: line}}
	}
	_, err := Analyze([]record.Record{mk(1, 1), mk(0, 2), mk(1, 3)}, DefaultOptions())
	if !errors.Is(err, record.ErrDuplicate) || !strings.Contains(err.Error(), "r.jsonl:3") || !strings.Contains(err.Error(), "r.jsonl:1") {
		t.Errorf("got %v", err)
	}
	res, err := Analyze([]record.Record{mk(2, 1), mk(0, 2), mk(1, 3)}, DefaultOptions())
	if err != nil || res.Configs[0].Reruns != 2 || len(res.NoiseFloor) != 1 || res.NoiseFloor[0].Pairs != 3 {
		t.Errorf("three runs: %v %+v", err, res)
	}
}

// Text-only configs alone: text-correct items are counted, but overwrite by visual input is undefined.
func TestTextOnlyWithoutVisual(t *testing.T) {
	metas := map[string]*record.ConfigMeta{"t1": {TextOnly: bp(true)}, "t2": {Frames: ip(0)}}
	res, err := Analyze(grid([]string{"t1", "t2"}, metas, map[string]string{"x": "10", "y": "11", "z": "00"}, nil), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.TextCorrectItems == nil || *res.TextCorrectItems != 2 {
		t.Errorf("text_correct_items %v, want 2", res.TextCorrectItems)
	}
	if res.TextOverwriteRate != nil || res.TextOverwriteRateOfTextCorrect != nil || res.TextOverwriteAllVisualRate != nil {
		t.Errorf("overwrite without a visual config: %v %v %v", res.TextOverwriteRate, res.TextOverwriteRateOfTextCorrect, res.TextOverwriteAllVisualRate)
	}
	if res.VisualConfusionRate != nil || len(res.Pairs) != 0 {
		t.Errorf("equal costs are incomparable: confusion %v pairs %v", res.VisualConfusionRate, res.Pairs)
	}
}

// The intervals equal a from-the-definition bootstrap that follows the documented stream (docs/audit.md):
// items in id order, resample b seeded splitmix64(seed ^ fnv1a64(scope) ^ (b+1)·golden), two indices per
// output (low half first), per-item metrics recomputed from correctness and costs, type-7 percentiles.
func TestBootstrapMatchesDefinition(t *testing.T) {
	opt := DefaultOptions()
	opt.Seed, opt.Resamples = 12345, 300
	recs := coreRecords()
	res, err := Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	costs := []int64{0, 8e4, 16e4, 32e4} // text, f8, f16, f32
	cfgIdx := map[string]int{"text": 0, "f8": 1, "f16": 2, "f32": 3}
	byItem := map[string][]int{}
	for _, r := range recs {
		if byItem[r.ItemID] == nil {
			byItem[r.ItemID] = []int{-1, -1, -1, -1}
		}
		byItem[r.ItemID][cfgIdx[r.Config]] = b2i(*r.Correct)
	}
	var items [][]int // paired items, id order
	for _, id := range []string{"i1", "i2", "i3", "i4", "i5", "i6"} {
		items = append(items, byItem[id])
	}
	h := fnv.New64a()
	h.Write([]byte("all"))
	scope := h.Sum64()
	n := uint64(len(items))
	var head, conf []float64
	for b := 0; b < opt.Resamples; b++ {
		seed := splitmix.Source{State: opt.Seed ^ scope ^ uint64(b+1)*0x9E3779B97F4A7C15}
		g := splitmix.Source{State: seed.Uint64()}
		var idx []int
		for len(idx) < len(items) {
			x := g.Uint64()
			idx = append(idx, int((x&0xFFFFFFFF)*n>>32))
			if len(idx) < len(items) {
				idx = append(idx, int((x>>32)*n>>32))
			}
		}
		acc := make([]int, 4)
		oracle, confused := 0, 0
		for _, i := range idx {
			c := items[i]
			any, cf := false, false
			for k := range c {
				acc[k] += c[k]
				any = any || c[k] == 1
				for k2 := range c {
					cf = cf || (costs[k] < costs[k2] && c[k] == 1 && c[k2] == 0)
				}
			}
			oracle += b2i(any)
			confused += b2i(cf)
		}
		best := slices.Max(acc)
		head = append(head, 100*float64(oracle-best)/float64(n))
		conf = append(conf, 100*float64(confused)/float64(n))
	}
	pctl := func(v []float64, q float64) float64 {
		slices.Sort(v)
		pos := q * float64(len(v)-1)
		lo := int(pos)
		if lo+1 >= len(v) {
			return v[len(v)-1]
		}
		return v[lo] + (pos-float64(lo))*(v[lo+1]-v[lo])
	}
	wantH := Interval{pctl(head, 0.025), pctl(head, 0.975)}
	wantC := Interval{pctl(conf, 0.025), pctl(conf, 0.975)}
	if res.OracleHeadroomCI == nil || math.Abs(res.OracleHeadroomCI.Lo-wantH.Lo) > 1e-9 || math.Abs(res.OracleHeadroomCI.Hi-wantH.Hi) > 1e-9 {
		t.Errorf("oracle_headroom_ci %+v, want %+v", res.OracleHeadroomCI, wantH)
	}
	if res.VisualConfusionRateCI == nil || math.Abs(res.VisualConfusionRateCI.Lo-wantC.Lo) > 1e-9 || math.Abs(res.VisualConfusionRateCI.Hi-wantC.Hi) > 1e-9 {
		t.Errorf("visual_confusion_rate_ci %+v, want %+v", res.VisualConfusionRateCI, wantC)
	}
	if wantH.Lo == wantH.Hi && wantC.Lo == wantC.Hi {
		t.Fatalf("degenerate intervals %+v %+v: the comparison would prove little", wantH, wantC)
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

// TestCoreMetricsMatchDefinitions recomputes METRICS.md's core table and pairs item by item from the
// definitions (pairwise cost comparisons, no trajectory table) on the synthetic grid: ten configs with a
// text-only one, three configs sharing the top cost (the default policy breaks the tie) and a cached copy.
func TestCoreMetricsMatchDefinitions(t *testing.T) {
	recs := synth.Records(400, 11)
	opt := DefaultOptions()
	opt.Resamples, opt.NoCascade = 0, true
	res, err := Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	cost := map[string]int64{}
	text := map[string]bool{}
	for _, r := range recs {
		m := r.ConfigMeta
		if m.TextOnly != nil && *m.TextOnly {
			cost[r.Config], text[r.Config] = 0, true
		} else {
			cost[r.Config] = int64(*m.Frames) * int64(*m.Width) * int64(*m.Height)
		}
	}
	c := map[string]map[string]bool{} // item → config → correct
	for _, r := range recs {
		if c[r.ItemID] == nil {
			c[r.ItemID] = map[string]bool{}
		}
		c[r.ItemID][r.Config] = *r.Correct
	}
	var cfgs []string
	for k := range cost {
		cfgs = append(cfgs, k)
	}
	slices.Sort(cfgs)
	N := float64(len(c))
	count := func(pred func(ci map[string]bool) bool) float64 {
		n := 0
		for _, ci := range c {
			n += b2i(pred(ci))
		}
		return 100 * float64(n) / N
	}
	exists := func(ci map[string]bool, visualOnly bool) bool {
		for _, a := range cfgs {
			for _, b := range cfgs {
				if visualOnly && (text[a] || text[b]) {
					continue
				}
				if cost[a] < cost[b] && ci[a] && !ci[b] {
					return true
				}
			}
		}
		return false
	}
	best, bestCfg := -1.0, ""
	for _, k := range cfgs {
		acc := count(func(ci map[string]bool) bool { return ci[k] })
		g := res.Accuracy[k]
		near(t, "accuracy["+k+"]", &g, acc)
		if acc > best || (acc == best && cost[k] < cost[bestCfg]) {
			best, bestCfg = acc, k
		}
	}
	near(t, "best_fixed", res.BestFixed, best)
	if res.BestFixedConfig != bestCfg {
		t.Errorf("best_fixed_config %q, want %q", res.BestFixedConfig, bestCfg)
	}
	oracle := count(func(ci map[string]bool) bool { return slices.Contains(slices.Collect(maps.Values(ci)), true) })
	near(t, "oracle_accuracy", res.OracleAccuracy, oracle)
	near(t, "oracle_headroom", res.OracleHeadroom, oracle-best)
	near(t, "visual_confusion_rate", res.VisualConfusionRate, count(func(ci map[string]bool) bool { return exists(ci, false) }))
	near(t, "visual_confusion_rate_visual_only", res.VisualConfusionRateVisualOnly, count(func(ci map[string]bool) bool { return exists(ci, true) }))
	top := "f128" // f128, f128-random and f128-dense share the top cost; f128 has the default policy
	if res.TerminalConfig != top {
		t.Fatalf("terminal config %q", res.TerminalConfig)
	}
	near(t, "terminal_regression_rate", res.TerminalRegressionRate, count(func(ci map[string]bool) bool {
		if ci[top] {
			return false
		}
		for _, a := range cfgs {
			if cost[a] < cost[top] && ci[a] {
				return true
			}
		}
		return false
	}))
	someVisualWrong := func(ci map[string]bool) bool {
		for _, v := range cfgs {
			if !text[v] && !ci[v] {
				return true
			}
		}
		return false
	}
	allVisualWrong := func(ci map[string]bool) bool {
		for _, v := range cfgs {
			if !text[v] && ci[v] {
				return false
			}
		}
		return true
	}
	over := count(func(ci map[string]bool) bool { return ci["text"] && someVisualWrong(ci) })
	textOK := count(func(ci map[string]bool) bool { return ci["text"] })
	near(t, "text_overwrite_rate", res.TextOverwriteRate, over)
	near(t, "text_overwrite_rate_of_text_correct", res.TextOverwriteRateOfTextCorrect, 100*over/textOK)
	near(t, "text_overwrite_all_visual_rate", res.TextOverwriteAllVisualRate, count(func(ci map[string]bool) bool { return ci["text"] && allVisualWrong(ci) }))
	near(t, "unstable_rate", res.UnstableRate, count(func(ci map[string]bool) bool {
		return slices.Contains(slices.Collect(maps.Values(ci)), true) && slices.Contains(slices.Collect(maps.Values(ci)), false)
	}))
	// Pairs: every (a, b) with cost(a) < cost(b), none other.
	got := map[string]Pair{}
	for _, p := range res.Pairs {
		got[p.From+">"+p.To] = p
	}
	want := 0
	for _, a := range cfgs {
		for _, b := range cfgs {
			if cost[a] >= cost[b] {
				continue
			}
			want++
			var r, h int
			for _, ci := range c {
				r += b2i(!ci[a] && ci[b])
				h += b2i(ci[a] && !ci[b])
			}
			p, ok := got[a+">"+b]
			if !ok || p.Rescued != r || p.Harmed != h || p.McNemarP != McNemarExact(r, h) {
				t.Errorf("pair %s→%s = %+v (present %v), want rescued %d harmed %d", a, b, p, ok, r, h)
			}
		}
	}
	if len(res.Pairs) != want {
		t.Errorf("%d pairs, want %d", len(res.Pairs), want)
	}
}
