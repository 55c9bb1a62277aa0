package record

import (
	"bytes"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// TestRangesMatchFlags: the ranges records are held to are the flags' (sampler.MaxBudget frames,
// geom.MaxSide a side), so a record can say nothing an import flag could not.
func TestRangesMatchFlags(t *testing.T) {
	if MaxFrames != sampler.MaxBudget || MaxSide != geom.MaxSide || MaxPixels != geom.MaxSide*geom.MaxSide {
		t.Fatalf("record's ranges (%d frames, %d side) are not the flags' (%d, %d)", MaxFrames, MaxSide, sampler.MaxBudget, geom.MaxSide)
	}
}

// TestOrigin: a row's source_tag and protocol_note travel with the record (write, read, the same
// values), are text, and are bounded.
func TestOrigin(t *testing.T) {
	yes := true
	r := Record{ItemID: "001-1", Config: "16f_151k", Correct: &yes, Task: "V1_short", Origin: &Origin{SourceTag: "release_v2", ProtocolNote: "LLaVA context cap 32f"}}
	var buf bytes.Buffer
	if err := Write(&buf, []Record{r}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"origin":{"source_tag":"release_v2","protocol_note":"LLaVA context cap 32f"}`) {
		t.Fatalf("written: %s", buf.String())
	}
	got, err := Read(&buf, "o.jsonl")
	if err != nil || got[0].Origin == nil || *got[0].Origin != *r.Origin {
		t.Fatalf("read back: %v %+v", err, got)
	}
	for _, line := range []string{
		`{"item_id":"a","config":"c","correct":true,"origin":"release"}`,
		`{"item_id":"a","config":"c","correct":true,"origin":{"source_tag":1}}`,
		"{\"item_id\":\"a\",\"config\":\"c\",\"correct\":true,\"origin\":{\"source_tag\":\"\xff\"}}",
		`{"item_id":"a","config":"c","correct":true,"origin":{"protocol_note":"` + strings.Repeat("x", MaxOriginBytes+1) + `"}}`,
	} {
		if _, err := Read(strings.NewReader(line), "o.jsonl"); err == nil || !strings.HasPrefix(err.Error(), "o.jsonl:1") {
			t.Errorf("%.80s: %v", line, err)
		}
	}
}
