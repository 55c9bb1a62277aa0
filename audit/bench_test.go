package audit

import (
	"bytes"
	"testing"

	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

// BenchmarkAudit100k audits 100 000 items × 10 configs (1 000 000 records, in memory): every metric,
// 1000 bootstrap resamples overall and per category and duration, and the automatic cascade sweep.
func BenchmarkAudit100k(b *testing.B) {
	recs := synth.Records(100_000, 7)
	opt := DefaultOptions()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(recs, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadRecords100k parses the same 1 000 000 records from canonical JSONL.
func BenchmarkReadRecords100k(b *testing.B) {
	var buf bytes.Buffer
	if err := record.Write(&buf, synth.Records(100_000, 7)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := record.Read(bytes.NewReader(buf.Bytes()), "bench.jsonl"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuditEndToEnd100k is what `framesweep audit FILE --json` does with such a file, minus the
// output: parse 1 000 000 records from JSONL, then audit them.
func BenchmarkAuditEndToEnd100k(b *testing.B) {
	var buf bytes.Buffer
	if err := record.Write(&buf, synth.Records(100_000, 7)); err != nil {
		b.Fatal(err)
	}
	opt := DefaultOptions()
	for b.Loop() {
		recs, err := record.Read(bytes.NewReader(buf.Bytes()), "bench.jsonl")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Analyze(recs, opt); err != nil {
			b.Fatal(err)
		}
	}
}
