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
	online := strings.Join([]string{
		`{"item_id":"a","config":"f2","status":"ok","correct":true,"confidence":0.9,"latency_s":0.1,"cascade":{"threshold":0.6,"budgets":[2,4],"step":1,"final":true,"stopped_at":2,"frames_fed_total":2,"frames_distinct":2,"step_build_s":0.05,"step_wall_s":0.15}}`,
		`{"item_id":"b","config":"f2","status":"ok","correct":false,"confidence":0.5,"latency_s":0.1,"cascade":{"threshold":0.6,"budgets":[2,4],"step":1,"final":false,"frames_fed_total":2,"frames_distinct":2,"step_build_s":0.05,"step_wall_s":0.15}}`,
		`{"item_id":"b","config":"f4","status":"ok","correct":true,"confidence":0.55,"latency_s":0.2,"cascade":{"threshold":0.6,"budgets":[2,4],"step":2,"final":true,"stopped_at":4,"frames_fed_total":6,"frames_distinct":4,"step_build_s":0.05,"step_wall_s":0.25}}`,
	}, "\n")
	recs, err := record.Read(strings.NewReader(online), "online.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Analyze(recs, DefaultOptions())
	if err != nil || res.OnlineCascade == nil || res.OnlineCascade.Items != 2 || len(res.Configs) != 1 || res.Configs[0].ID != "f2" {
		t.Fatalf("analyze: %+v %v", res, err)
	}
}
