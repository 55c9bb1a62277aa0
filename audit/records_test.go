package audit

import (
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// TestErrorRecords: a sweep's error records ("status": "error") read and validate without a verdict,
// are left out of every metric, and are counted with examples; an unknown status or an error record
// with a verdict is invalid.
func TestErrorRecords(t *testing.T) {
	in := strings.Join([]string{
		`{"item_id":"a","config":"f8","correct":true,"status":"ok"}`,
		`{"item_id":"a","config":"f16","correct":false}`,
		`{"item_id":"b","config":"f8","correct":false}`,
		`{"item_id":"b","config":"f16","status":"error","error":"video not found","video":"x.mp4"}`,
		`{"item_id":"c","config":"f8","correct":true}`,
		`{"item_id":"c","config":"f16","correct":true}`,
	}, "\n")
	recs, err := record.Read(strings.NewReader(in), "run/records.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Analyze(recs, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorRecords.Count != 1 || res.ErrorRecords.ByConfig["f16"] != 1 || !strings.Contains(res.ErrorRecords.Examples[0], "video not found") {
		t.Fatalf("error records %+v", res.ErrorRecords)
	}
	// b has no answer at f16: the pairing drops it, so 2 items remain.
	if res.Items != 2 || res.Accuracy["f8"] != 100 {
		t.Fatalf("items %d accuracy %v", res.Items, res.Accuracy)
	}
	for _, bad := range []string{
		`{"item_id":"a","config":"x","status":"weird","correct":true}`,
		`{"item_id":"a","config":"x","status":"error","correct":true}`,
	} {
		if _, err := record.Read(strings.NewReader(bad), "r.jsonl"); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
