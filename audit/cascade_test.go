package audit

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit/cascade"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

// TestAnalyzeCascade: the audit's cascade is cascade.Run over the audit's dataset with the audit's
// seed and default policy, so Analyze gives what `framesweep cascade` (cascade.Offline) gives; a bad
// budget is ErrBadArgs through Analyze too.
func TestAnalyzeCascade(t *testing.T) {
	recs := synth.Records(300, 7)
	opt := DefaultOptions()
	opt.Resamples, opt.Seed = 0, 5
	opt.Cascade = cascade.Options{Budgets: []int{8, 16, 32, 64, 128}, Folds: 4}
	res, err := Analyze(recs, opt)
	if err != nil || res.Cascade == nil || res.Cascade.FoldSeed != 5 || len(res.Cascade.FoldResults) != 4 {
		t.Fatalf("analyze: %+v %v", res.Cascade, err)
	}
	alone, _, err := cascade.Offline(recs, opt.Cascade, opt.Seed, opt.DefaultPolicy)
	if err != nil || !reflect.DeepEqual(alone, res.Cascade) {
		t.Errorf("cascade.Offline = %+v, %v; Analyze gave %+v", alone, err, res.Cascade)
	}
	opt.Cascade.Budgets = []int{8, 24}
	if _, err := Analyze(recs, opt); !errors.Is(err, ErrBadArgs) || !strings.Contains(err.Error(), "24") {
		t.Errorf("unknown budget: %v", err)
	}
}

// TestAnalyzeOnlineRun: an online cascade run is summarised in online_cascade, and the other metrics
// cover only the configs every item was asked at.
func TestAnalyzeOnlineRun(t *testing.T) {
	// Item a stopped at 2 frames, b escalated to 4: only f2 was asked of every item.
	step := func(item, config string, ok bool, n int, final bool) record.Record {
		c := &record.CascadeStep{Threshold: 0.6, Budgets: []int{2, 4}, Step: n, Final: final, FramesFed: 2 * n, FramesDistinct: 2 * n}
		if final {
			c.StoppedAt = 2 * n
		}
		return record.Record{ItemID: item, Config: config, Correct: &ok, Cascade: c}
	}
	recs := []record.Record{step("a", "f2", true, 1, true), step("b", "f2", false, 1, false), step("b", "f4", true, 2, true)}
	res, err := Analyze(recs, DefaultOptions())
	if err != nil || res.OnlineCascade == nil || res.OnlineCascade.Items != 2 || len(res.Configs) != 1 || res.Configs[0].ID != "f2" {
		t.Fatalf("analyze: %+v %v", res, err)
	}
}
