package synth

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/framesweep/framesweep/record"
)

var update = flag.Bool("update", false, "rewrite examples/records/demo.jsonl")

const examplePath = "../../examples/records/demo.jsonl"

// TestExampleRecords keeps examples/records/demo.jsonl equal to Records(100, 42) (regenerate with
// `go test ./record/synth -run TestExampleRecords -update`) and checks it reads back as valid records.
func TestExampleRecords(t *testing.T) {
	var buf bytes.Buffer
	if err := record.Write(&buf, Records(100, 42)); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(examplePath, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("%s differs from Records(100, 42): run go test ./record/synth -run TestExampleRecords -update", examplePath)
	}
	recs, err := record.Read(bytes.NewReader(got), examplePath)
	if err != nil || len(recs) != 1000 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
}
