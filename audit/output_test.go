package audit

import (
	"errors"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

// TestAnalyzeAll: one model's records give a Result, a ceiling for it leaves the configs beyond it out
// with a note, a ceiling for another model is an error; several models give a ModelsResult; records
// whose ids never meet are ErrNothingPaired, not an empty audit.
func TestAnalyzeAll(t *testing.T) {
	recs := synth.Records(60, 5)
	opt := ModelsOptions{Options: DefaultOptions(), Ceilings: map[string]int{"": 32}}
	opt.Resamples = 0
	out, err := AnalyzeAll(recs, opt)
	if err != nil || out.Single == nil || out.Multi != nil || out.Value() != any(out.Single) {
		t.Fatalf("one model: %+v %v", out, err)
	}
	for _, c := range out.Single.Configs {
		if c.Frames != nil && *c.Frames > 32 {
			t.Errorf("config %s over the ceiling audited", c.ID)
		}
	}
	if n := out.Single.Notes; len(n) == 0 || !strings.Contains(n[len(n)-1], "beyond the 32-frame ceiling") {
		t.Errorf("notes %q", n)
	}
	if len(out.Records) >= len(recs) {
		t.Errorf("%d records audited of %d: the ceiling left none out", len(out.Records), len(recs))
	}
	opt.Ceilings = map[string]int{"other": 32}
	if _, err := AnalyzeAll(recs, opt); err == nil || !strings.Contains(err.Error(), `--ceiling names model "other"`) {
		t.Errorf("ceiling of another model: %v", err)
	}
	opt.Ceilings = nil
	two := append(named(synth.Records(20, 1), "a"), named(synth.Records(20, 1), "b")...)
	if out, err := AnalyzeAll(two, opt); err != nil || out.Multi == nil || len(out.Multi.Models) != 2 || out.Warnings() == nil {
		t.Errorf("two models: %+v %v", out, err)
	}
	apart := []record.Record{{ItemID: "x:1", Config: "f8", Correct: bp(true), ConfigMeta: metaF(8, 10, 10, "uniform")},
		{ItemID: "y:1", Config: "f16", Correct: bp(true), ConfigMeta: metaF(16, 10, 10, "uniform")}}
	if _, err := AnalyzeAll(apart, opt); !errors.Is(err, ErrNothingPaired) {
		t.Errorf("ids that never meet: %v", err)
	}
	if err := CheckModels(two, []string{"a", "c"}, "in.jsonl"); err == nil || !strings.Contains(err.Error(), `in.jsonl: no record names model "c"`) {
		t.Errorf("unknown model: %v", err)
	}
}

func named(recs []record.Record, model string) []record.Record {
	for i := range recs {
		recs[i].Model = model
	}
	return recs
}
