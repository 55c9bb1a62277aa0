package cascade

import (
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// TestOnlineAndReplay: an online run's summary from hand-written records, and the offline replay
// that predicts where each item stops.
func TestOnlineAndReplay(t *testing.T) {
	online := strings.Join([]string{
		`{"item_id":"a","config":"f2","status":"ok","correct":true,"confidence":0.9,"latency_s":0.1,"cascade":{"threshold":0.6,"budgets":[2,4],"step":1,"final":true,"stopped_at":2,"frames_fed_total":2,"frames_distinct":2,"step_build_s":0.05,"step_wall_s":0.15}}`,
		`{"item_id":"b","config":"f2","status":"ok","correct":false,"confidence":0.5,"latency_s":0.1,"cascade":{"threshold":0.6,"budgets":[2,4],"step":1,"final":false,"frames_fed_total":2,"frames_distinct":2,"step_build_s":0.05,"step_wall_s":0.15}}`,
		`{"item_id":"b","config":"f4","status":"ok","correct":true,"confidence":0.55,"latency_s":0.2,"cascade":{"threshold":0.6,"budgets":[2,4],"step":2,"final":true,"stopped_at":4,"frames_fed_total":6,"frames_distinct":4,"step_build_s":0.05,"step_wall_s":0.25}}`,
	}, "\n")
	recs, err := record.Read(strings.NewReader(online), "online.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	oc, err := SummarizeOnline(recs)
	if err != nil {
		t.Fatal(err)
	}
	if oc.Items != 2 || oc.Accuracy != 100 || oc.MeanFramesFed != 4 || oc.MeanFramesDistinct != 3 || len(oc.StoppedAt) != 2 || oc.MeanLatencyS != 0.2 || oc.First.Accuracy != 50 {
		t.Fatalf("%+v", oc)
	}
	full := strings.Join([]string{
		`{"item_id":"a","config":"f2","correct":true,"confidence":0.9}`,
		`{"item_id":"a","config":"f4","correct":true,"confidence":0.3}`,
		`{"item_id":"b","config":"f2","correct":false,"confidence":0.5}`,
		`{"item_id":"b","config":"f4","correct":true,"confidence":0.55}`,
		`{"item_id":"c","config":"f2","correct":false}`,
	}, "\n")
	frecs, err := record.Read(strings.NewReader(full), "full.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	stops, err := Stops(frecs, []string{"f2", "f4"}, 0.6)
	if err != nil || stops["a"] != "f2" || stops["b"] != "f4" || len(stops) != 2 {
		t.Fatalf("replay %v %v", stops, err)
	}
	// A record of the run without its cascade step is refused.
	bad := online + "\n" + `{"item_id":"c","config":"f2","status":"ok","correct":true}`
	if recs, err = record.Read(strings.NewReader(bad), "online.jsonl"); err != nil {
		t.Fatal(err)
	}
	if _, err := SummarizeOnline(recs); err == nil {
		t.Fatal("a mixed run accepted")
	}
}
