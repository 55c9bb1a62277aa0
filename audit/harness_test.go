package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// harnessRecs builds one config's records as an importer writes them: the file-level aggregate on
// every record, the left-out records marked.
func harnessRecs(cfg, metric, kind string, value float64, verdicts []bool, skip []bool, durs []string) []record.Record {
	counted, left := 0, 0
	for _, s := range skip {
		if s {
			left++
		} else {
			counted++
		}
	}
	var out []record.Record
	for i, v := range verdicts {
		v := v
		r := record.Record{ItemID: string(rune('a' + i)), Config: cfg, Correct: &v,
			Harness: &record.Harness{Metric: metric, Kind: kind, Value: value, Counted: counted, LeftOut: left, Skip: skip[i]},
			Source:  record.Source{Path: cfg + ".jsonl", Line: i + 1}}
		if durs != nil {
			r.Duration = durs[i]
		}
		out = append(out, r)
	}
	return out
}

func TestAccuracyHarness(t *testing.T) {
	v := []bool{true, false, true, true, false, false}
	noSkip := make([]bool, 6)
	durs := []string{"short", "short", "medium", "medium", "long", "long"}
	// f8: a micro aggregate over all 6 (50 points); f16: a macro aggregate (as MLVU's M-avg) that the
	// audit cannot recompute, with the item-level accuracy beside it.
	recs := harnessRecs("f8", "lmms-eval videomme videomme_perception_score (accuracy)", record.HarnessMicro, 50, v, noSkip, durs)
	recs = append(recs, harnessRecs("f16", "lmms-eval mlvu_dev mlvu_percetion_score (M-avg)", record.HarnessMacro, 42.97, []bool{true, true, false, true, false, true}, noSkip, nil)...)
	opt := DefaultOptions()
	opt.Resamples = 0
	res, err := Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	f8, f16 := res.AccuracyHarness["f8"], res.AccuracyHarness["f16"]
	if f8 == nil || *f8.Value != 50 || f8.Kind != record.HarnessMicro || f8.Records != 6 || f8.Counted != 6 || !f8.Complete || *f8.ItemLevel != 50 {
		t.Fatalf("f8 %+v", f8)
	}
	if f8.ByDuration["short"] != 50 || f8.ByDuration["medium"] != 100 || f8.ByDuration["long"] != 0 {
		t.Errorf("by duration %v", f8.ByDuration)
	}
	if f16 == nil || *f16.Value != 42.97 || math.Abs(*f16.ItemLevel-400.0/6) > 1e-9 || f16.ByDuration != nil || !f16.Complete {
		t.Fatalf("f16 %+v", f16)
	}
	if len(hNotes(res)) != 0 {
		t.Errorf("notes %q", hNotes(res))
	}
	// The JSON key and its shape.
	b, _ := json.Marshal(res)
	if !bytes.Contains(b, []byte(`"accuracy_harness":{"f16":{"metric":"lmms-eval mlvu_dev mlvu_percetion_score (M-avg)","kind":"macro","value":42.97,`)) {
		t.Errorf("json: %s", b[:min(len(b), 400)])
	}
}

func TestAccuracyHarnessLeftOutFlippedAndFiltered(t *testing.T) {
	// VLMEvalKit-style: row 2 has score -1, left out of the rating (2 of 3 counted → 50 points over the
	// counted... 1 correct of 2 counted).
	v := []bool{true, false, false, true}
	skip := []bool{false, false, true, false}
	recs := harnessRecs("f8", "VLMEvalKit Video-MME overall (mean score over rows with score ≥ 0)", record.HarnessMicro, 100*2.0/3, v, skip, nil)
	opt := DefaultOptions()
	opt.Resamples = 0
	res, err := Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	h := res.AccuracyHarness["f8"]
	if h.Counted != 3 || h.LeftOut != 1 || !h.Complete || *h.ItemLevel != 50 || len(hNotes(res)) != 0 {
		t.Fatalf("%+v notes %q", h, hNotes(res))
	}
	// An opt-in rescore flipped record 1 (wrong → correct): the item-level accuracy moves, the harness
	// number does not, and the recomputation from the harness verdicts still agrees.
	t1 := true
	recs[1].Correct = &t1
	hh := *recs[1].Harness
	hh.Flipped = true
	recs[1].Harness = &hh
	res, err = Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	h = res.AccuracyHarness["f8"]
	if h.Rescored != 1 || *h.ItemLevel != 75 || math.Abs(*h.Value-200.0/3) > 1e-9 || len(hNotes(res)) != 0 {
		t.Fatalf("flipped: %+v notes %q", h, hNotes(res))
	}
	// Records filtered after import: the value describes the file, not these records, and a note says so.
	res, err = Analyze(recs[:3], opt)
	if err != nil {
		t.Fatal(err)
	}
	if h := res.AccuracyHarness["f8"]; h.Complete || len(hNotes(res)) != 1 || !strings.Contains(hNotes(res)[0], "filtered or merged") {
		t.Errorf("filtered: %+v %q", h, hNotes(res))
	}
	// An edited verdict (not marked as flipped) is caught by the micro recomputation.
	f := false
	recs[0].Correct = &f
	res = mustAnalyzeOpt(t, recs, opt)
	if len(hNotes(res)) != 1 || !strings.Contains(hNotes(res)[0], "edited after import") {
		t.Errorf("edited: %q", hNotes(res))
	}
}

func TestAccuracyHarnessSeveralAndConflicts(t *testing.T) {
	no := make([]bool, 2)
	a := harnessRecs("f8", "lmms-eval mvbench_action_count mvbench_accuracy (accuracy)", record.HarnessMicro, 50, []bool{true, false}, no, nil)
	b := harnessRecs("f8", "lmms-eval mvbench_scene_transition mvbench_accuracy (accuracy)", record.HarnessMicro, 100, []bool{true, true}, no, nil)
	for i := range b {
		b[i].ItemID = "z" + b[i].ItemID
	}
	opt := DefaultOptions()
	opt.Resamples = 0
	res, err := Analyze(append(a, b...), opt)
	if err != nil {
		t.Fatal(err)
	}
	h := res.AccuracyHarness["f8"]
	if h.Value != nil || len(h.Parts) != 2 || h.Records != 4 || *h.ItemLevel != 75 || *h.Parts[0].Value != 50 || !h.Complete {
		t.Fatalf("%+v", h)
	}
	// Two files' numbers under one metric name and config: an error naming both lines.
	c := harnessRecs("f8", "lmms-eval mvbench_action_count mvbench_accuracy (accuracy)", record.HarnessMicro, 60, []bool{true, false}, no, nil)
	for i := range c {
		c[i].ItemID = "y" + c[i].ItemID
		c[i].Source.Path = "other.jsonl"
	}
	_, err = Analyze(append(a, c...), opt)
	if !errors.Is(err, record.ErrConflict) || !strings.Contains(err.Error(), "other.jsonl:1") || !strings.Contains(err.Error(), "f8.jsonl:1") {
		t.Errorf("conflict: %v", err)
	}
	// Records without a harness field beside stamped ones are noted.
	plain := []record.Record{{ItemID: "q", Config: "f8", Correct: &[]bool{true}[0]}}
	res = mustAnalyzeOpt(t, append(a, plain...), opt)
	if !strings.Contains(strings.Join(hNotes(res), " "), "1 records carry no harness aggregate") {
		t.Errorf("notes %q", hNotes(res))
	}
	// No stamped record: an empty object, not null.
	b2, _ := json.Marshal(mustAnalyze(t, plain))
	if !bytes.Contains(b2, []byte(`"accuracy_harness":{}`)) {
		t.Errorf("empty accuracy_harness: %s", b2[:200])
	}
}

func mustAnalyze(t *testing.T, recs []record.Record) *Result {
	t.Helper()
	opt := DefaultOptions()
	opt.Resamples = 0
	res, err := Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// hNotes keeps the notes about harness aggregates.
func hNotes(r *Result) []string {
	var out []string
	for _, n := range r.Notes {
		if strings.Contains(n, "harness") {
			out = append(out, n)
		}
	}
	return out
}

// mustAnalyzeOpt is Analyze under opt; an error stops the test.
func mustAnalyzeOpt(t *testing.T, recs []record.Record, opt Options) *Result {
	t.Helper()
	res, err := Analyze(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
