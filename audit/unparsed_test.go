package audit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// TestUnparsedCounted: unparsed answers count wrong in the metrics but are counted per config, with the
// accuracy over parsed answers, the flows they take part in, and a warning for a config mostly
// unparsed and for a cascade over them.
func TestUnparsedCounted(t *testing.T) {
	cfgs := []string{"f2", "f4", "f8"}
	metas := map[string]*record.ConfigMeta{"f2": metaF(2, 64, 64, "uniform"), "f4": metaF(4, 64, 64, "uniform"), "f8": metaF(8, 64, 64, "uniform")}
	// 'u' is an unparsed answer (wrong, no letter).
	pats := map[string]string{"a": "11u", "b": "10u", "c": "u1u", "d": "00u", "e": "111", "f": "u0u"}
	var recs []record.Record
	line := 0
	for _, it := range sortedKeys(pats) {
		for k, c := range cfgs {
			line++
			ch := pats[it][k]
			conf := 0.3 + 0.1*float64(k)
			r := record.Record{ItemID: it, Config: c, Correct: bp(ch == '1'), Unparsed: ch == 'u', ConfigMeta: metas[c], Confidence: &conf,
				Source: record.Source{Path: "mem.jsonl", Line: line}}
			recs = append(recs, r)
		}
	}
	res, err := Analyze(recs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	u := res.Unparsed
	if u.Count != 7 || u.ByConfig["f2"] != 2 || u.ByConfig["f4"] != 0 || u.ByConfig["f8"] != 5 {
		t.Fatalf("unparsed %+v", u)
	}
	near(t, "share f8", ptr(u.Share["f8"]), 500.0/6)
	near(t, "accuracy f8", ptr(res.Accuracy["f8"]), 100.0/6) // counted wrong
	near(t, "accuracy_parsed f8", u.AccuracyParsed["f8"], 100)
	near(t, "accuracy_parsed f2", u.AccuracyParsed["f2"], 75)
	if len(u.Mostly) != 1 || u.Mostly[0] != "f8" {
		t.Errorf("mostly %v, want [f8]", u.Mostly)
	}
	// f2 → f4: c and f are unparsed at f2; c is rescued from it. f4 → f8: a, c harmed into unparsed.
	want := []UnparsedFlow{{From: "f2", To: "f4", Rescued: 1}, {From: "f4", To: "f8", Harmed: 2}}
	if len(u.Flows) != 2 || u.Flows[0] != want[0] || u.Flows[1] != want[1] {
		t.Errorf("flows %+v, want %+v", u.Flows, want)
	}
	if len(res.Warnings) < 2 || !strings.Contains(res.Warnings[0], "f8 83%") || !strings.Contains(res.Warnings[1], "cascade") {
		t.Errorf("warnings %q", res.Warnings)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "7 answer(s) named no option letter") {
		t.Errorf("notes %q", res.Notes)
	}
	if res.LetterPrior != nil {
		t.Errorf("letter prior without gold letters: %+v", res.LetterPrior)
	}
	// No unparsed answer: no warning, no note, zero counts.
	for i := range recs {
		recs[i].Unparsed = false
	}
	res, err = Analyze(recs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.Unparsed.Count != 0 || len(res.Warnings) != 0 || strings.Contains(strings.Join(res.Notes, "\n"), "unparsed") {
		t.Errorf("no unparsed answers: %+v %q %q", res.Unparsed, res.Warnings, res.Notes)
	}
}

func ptr(v float64) *float64 { return &v }

// TestTopTie: the costliest cost shared by the raw and cached pipelines of one config is no tie (the
// main grid is raw); a real tie's note names what the tied configs differ in, not the policy when
// the policy is the same.
func TestTopTie(t *testing.T) {
	meta := func(w, h int, pipeline string) *record.ConfigMeta {
		m := metaF(4, w, h, "uniform")
		m.Pipeline = pipeline
		return m
	}
	pats := map[string]string{"a": "110", "b": "100", "c": "011", "d": "111"}
	cases := []struct {
		metas    map[string]*record.ConfigMeta
		top      string
		noteHas  string
		noteNot  string
		terminal float64
	}{
		{metas: map[string]*record.ConfigMeta{"f2": metaF(2, 64, 64, "uniform"), "hi-raw": meta(64, 64, "raw"), "hi-cached": meta(64, 64, "cached")},
			top: "hi-raw", terminal: 25},
		{metas: map[string]*record.ConfigMeta{"f2": metaF(2, 64, 64, "uniform"), "hi-raw": meta(128, 32, "raw"), "hi-cached": meta(32, 128, "raw")},
			noteHas: "differ in size", noteNot: "policy,"},
	}
	for i, c := range cases {
		res, err := Analyze(grid([]string{"f2", "hi-raw", "hi-cached"}, c.metas, pats, nil), DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(res.Notes, "\n")
		if c.top != "" {
			if res.TerminalConfig != c.top || res.TerminalRegressionRate == nil || *res.TerminalRegressionRate != c.terminal {
				t.Errorf("case %d: terminal %q %v, want %q %v (notes %q)", i, res.TerminalConfig, res.TerminalRegressionRate, c.top, c.terminal, notes)
			}
			if strings.Contains(notes, "terminal_regression_rate undefined") {
				t.Errorf("case %d: %s", i, notes)
			}
			continue
		}
		if res.TerminalRegressionRate != nil || !strings.Contains(notes, c.noteHas) || strings.Contains(notes, c.noteNot) {
			t.Errorf("case %d: terminal %v, notes %q", i, res.TerminalRegressionRate, notes)
		}
	}
}

// TestCheckNotEmpty: an audit with no paired item is ErrNothingPaired naming the ids that never meet;
// one with paired items is not.
func TestCheckNotEmpty(t *testing.T) {
	var recs []record.Record
	for i, id := range []string{"videomme:0", "videomme:1", "0", "1"} {
		c := "f16"
		if i >= 2 {
			c = "f32"
		}
		recs = append(recs, record.Record{ItemID: id, Config: c, Correct: bp(i%2 == 0), ConfigMeta: metaF(16*(1+i/2), 8, 8, "uniform"),
			Source: record.Source{Path: "r.jsonl", Line: i + 1}})
	}
	res, err := Analyze(recs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	err = CheckNotEmpty(res, nil, recs, ModelsOptions{})
	if !errors.Is(err, ErrNothingPaired) || !strings.Contains(err.Error(), "r.jsonl") || !strings.Contains(err.Error(), "--item-prefix videomme:") {
		t.Fatalf("err %v", err)
	}
	recs[2].ItemID, recs[3].ItemID = "videomme:0", "videomme:1"
	if res, err = Analyze(recs, DefaultOptions()); err != nil || CheckNotEmpty(res, nil, recs, ModelsOptions{}) != nil {
		t.Errorf("paired: %v %v", err, CheckNotEmpty(res, nil, recs, ModelsOptions{}))
	}
}

// TestTaskAdvice: ids that differ only by an lmms-eval task prefix (two logs whose renamed files gave
// two tasks), or the same ids under two tasks, suggest --task, not --item-id/--item-prefix; for one
// model and for two.
func TestTaskAdvice(t *testing.T) {
	mk := func(ids []string, tasks []string, models ...string) []record.Record {
		var recs []record.Record
		for i, id := range ids {
			c, m := "f16", ""
			if i >= len(ids)/2 {
				c = "f32"
			}
			if len(models) > 0 {
				m = models[i*len(models)/len(ids)]
				c = "f16"
			}
			recs = append(recs, record.Record{ItemID: id, Task: tasks[i], Config: c, Correct: bp(i%2 == 0), Model: m,
				ConfigMeta: metaF(16*(1+i*2/len(ids)), 8, 8, "uniform"), Source: record.Source{Path: "r.jsonl", Line: i + 1}})
		}
		return recs
	}
	for name, recs := range map[string][]record.Record{
		"prefix": mk([]string{"videomme:0", "videomme:1", "videomme_f32:0", "videomme_f32:1"}, []string{"videomme", "videomme", "videomme_f32", "videomme_f32"}),
		"task":   mk([]string{"0", "1", "0", "1"}, []string{"v1", "v1", "v1_long", "v1_long"}),
	} {
		res, err := Analyze(recs, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		err = CheckNotEmpty(res, nil, recs, ModelsOptions{})
		if !errors.Is(err, ErrNothingPaired) || !strings.Contains(err.Error(), "--task") || strings.Contains(err.Error(), "import both with --item-id") {
			t.Errorf("%s: %v", name, err)
		}
	}
	two := mk([]string{"videomme:0", "videomme:1", "videomme_x:0", "videomme_x:1"}, []string{"a", "a", "b", "b"}, "m1", "m2")
	res, err := AnalyzeModels(two, ModelsOptions{Options: DefaultOptions(), AllowDrop: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckNotEmpty(nil, res, two, ModelsOptions{}); err == nil || !strings.Contains(err.Error(), "task prefix") || !strings.Contains(err.Error(), "--task") {
		t.Errorf("two models: %v", err)
	}
}

// TestMaxPixelsCost: imported configs of one budget that differ only in max_pixels are ordered by
// frames × max_pixels, and two allocations of one pixel budget form an iso-compute group, instead of
// tying at frames.
func TestMaxPixelsCost(t *testing.T) {
	mp := func(frames, px int) *record.ConfigMeta {
		return &record.ConfigMeta{Frames: ip(frames), MaxPixels: ip(px)}
	}
	metas := map[string]*record.ConfigMeta{"f16-lo": mp(16, 100_000), "f16-hi": mp(16, 400_000), "f32-lo": mp(32, 200_000)}
	res, err := Analyze(grid([]string{"f16-lo", "f16-hi", "f32-lo"}, metas, map[string]string{"a": "101", "b": "011", "c": "110"}, nil), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Configs {
		got = append(got, fmt.Sprintf("%s:%d:%s", c.ID, *c.Cost, c.CostUnit))
	}
	if want := "f16-lo:1600000:max_pixels f16-hi:6400000:max_pixels f32-lo:6400000:max_pixels"; strings.Join(got, " ") != want {
		t.Errorf("configs %s, want %s", strings.Join(got, " "), want)
	}
	if len(res.IsoCompute) != 1 || strings.Join(res.IsoCompute[0].Configs, ",") != "f16-hi,f32-lo" {
		t.Errorf("iso-compute %+v", res.IsoCompute)
	}
	if len(res.Pairs) == 0 || res.Pairs[0].From != "f16-lo" {
		t.Errorf("pairs %+v", res.Pairs)
	}
}
