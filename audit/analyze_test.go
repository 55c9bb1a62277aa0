package audit

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/framesweep/framesweep/audit/dataset"
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

// TestPartlyUnknownCosts: one config of unknown cost beside known ones leaves the configs with no
// order: confusion (both), terminal regression, the pairs and the transitions are undefined, each
// with the reason naming that config, never computed over the known costs or the names; accuracy,
// the oracle, text overwrite and instability stay defined; the trajectories' order tags are
// undefined too. Other nulls carry their own reasons.
func TestPartlyUnknownCosts(t *testing.T) {
	metas := map[string]*record.ConfigMeta{"text": {TextOnly: bp(true)}, "f8": metaF(8, 10, 10, "uniform"), "f16": metaF(16, 10, 10, "uniform")}
	recs := grid([]string{"text", "f8", "f16", "zz"}, metas, map[string]string{"x": "1001", "y": "0110", "z": "1100", "w": "1111"}, nil)
	res, err := Analyze(recs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.VisualConfusionRate != nil || res.VisualConfusionRateCI != nil || res.VisualConfusionRateVisualOnly != nil || res.TerminalRegressionRate != nil ||
		len(res.Pairs) != 0 || len(res.Transitions) != 0 || res.SamplingRecovery != nil {
		t.Errorf("ordered metrics with an unknown cost: %v %v %v %v %v", res.VisualConfusionRate, res.VisualConfusionRateVisualOnly, res.TerminalRegressionRate, res.Pairs, res.Transitions)
	}
	for _, k := range []string{"visual_confusion_rate", "visual_confusion_rate_visual_only", "terminal_regression_rate", "pairs", "transitions"} {
		if !strings.Contains(res.Undefined[k], "configs zz have unknown cost") {
			t.Errorf("undefined[%s] = %q", k, res.Undefined[k])
		}
	}
	near(t, "oracle", res.OracleAccuracy, 100)
	near(t, "text overwrite", res.TextOverwriteRate, 50)
	near(t, "unstable", res.UnstableRate, 75)
	if len(res.Undefined) != 5 {
		t.Errorf("undefined %v: a defined metric is named", res.Undefined)
	}
	ts, err := Trajectories(recs, "uniform")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Undefined) != 3 || ts.Undefined["confused"] == "" || len(ts.Transitions) != 0 {
		t.Errorf("trajectories: undefined %v transitions %v", ts.Undefined, ts.Transitions)
	}
	for _, it := range ts.Items {
		if it.Tags.Confused || len(it.Rescued)+len(it.Harmed) != 0 {
			t.Errorf("%s: tags %+v rescued %v harmed %v", it.ItemID, it.Tags, it.Rescued, it.Harmed)
		}
	}
	// No text-only config, one cost level: their own reasons.
	one, err := Analyze(grid([]string{"f8", "f8b"}, map[string]*record.ConfigMeta{"f8": metaF(8, 10, 10, "uniform"), "f8b": metaF(8, 10, 10, "random")},
		map[string]string{"x": "10", "y": "01"}, nil), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if one.Undefined["text_overwrite_rate"] != "no text-only config" || one.Undefined["visual_confusion_rate"] != "fewer than two configs of different cost" ||
		!strings.Contains(one.Undefined["terminal_regression_rate"], "single cost level") {
		t.Errorf("undefined %v", one.Undefined)
	}
}

// TestCostRanges: a negative frame count, a size under 1 and a cost beyond int64 are errors naming the
// record that priced the config, never a wrapped negative cost ordered before text-only.
func TestCostRanges(t *testing.T) {
	for _, meta := range []*record.ConfigMeta{
		metaF(999999999999, 65536, 65536, "uniform"), metaF(-4, 10, 10, "uniform"), metaF(8, 0, 10, "uniform"),
		{Frames: ip(1 << 40), MaxPixels: ip(1 << 40)},
	} {
		recs := grid([]string{"text", "big"}, map[string]*record.ConfigMeta{"text": {TextOnly: bp(true)}, "big": meta}, map[string]string{"a": "10", "b": "01"}, nil)
		_, err := Analyze(recs, DefaultOptions())
		if err == nil || !strings.Contains(err.Error(), "mem.jsonl:2") || !strings.Contains(err.Error(), `config "big"`) {
			t.Errorf("frames %d: %v", *meta.Frames, err)
		}
	}
	recs := grid([]string{"text", "big"}, map[string]*record.ConfigMeta{"text": {TextOnly: bp(true)}, "big": metaF(131072, 65536, 65536, "uniform")},
		map[string]string{"a": "10", "b": "01"}, nil)
	res, err := Analyze(recs, DefaultOptions())
	if err != nil || *res.Configs[1].Cost != 131072*65536*65536 || res.Configs[0].ID != "text" {
		t.Errorf("the largest flag-range cost: %v %+v", err, res)
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
