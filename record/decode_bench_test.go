package record_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	gojson "github.com/goccy/go-json"

	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

// recordLines is the record schema as readers meet it: the synthetic demo grid (every optional field a
// sweep writes except indices) and, as a sweep writes them, records with the 32 frame indices fed.
func recordLines(tb testing.TB) [][]byte {
	recs := synth.Records(2000, 7)
	for i := range recs {
		if i%2 == 1 && recs[i].ConfigMeta != nil {
			m := *recs[i].ConfigMeta
			for k := 0; k < 32; k++ {
				m.Indices = append(m.Indices, k*37+i%5)
			}
			recs[i].ConfigMeta = &m
		}
	}
	var buf bytes.Buffer
	if err := record.Write(&buf, recs); err != nil {
		tb.Fatal(err)
	}
	return bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
}

// BenchmarkDecodeRecord decodes canonical record lines into Record one by one (one goroutine) with
// encoding/json and with goccy/go-json, which Read uses (decodeFull).
// (audit/fastjson.go, the hand-written scanner this replaced, ran as impl=fastjson up to commit c541ef5.)
//
//	go test -run '^$' -bench BenchmarkDecodeRecord -benchtime 20x -count 5 ./record/
func BenchmarkDecodeRecord(b *testing.B) {
	lines := recordLines(b)
	var total int64
	for _, l := range lines {
		total += int64(len(l))
	}
	impls := []struct {
		name   string
		decode func() func([]byte, *record.Record) error
	}{
		{"encoding-json", func() func([]byte, *record.Record) error {
			return func(l []byte, r *record.Record) error { *r = record.Record{}; return json.Unmarshal(l, r) }
		}},
		{"go-json", func() func([]byte, *record.Record) error {
			return func(l []byte, r *record.Record) error { *r = record.Record{}; return gojson.Unmarshal(l, r) }
		}},
	}
	for _, impl := range impls {
		b.Run(fmt.Sprintf("impl=%s/lines=%d", impl.name, len(lines)), func(b *testing.B) {
			b.SetBytes(total)
			b.ReportAllocs()
			recs := make([]record.Record, len(lines))
			for b.Loop() {
				dec := impl.decode()
				for i, l := range lines {
					if err := dec(l, &recs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestDecodersAgree: the three decoders of the benchmark read the same records from its lines.
func TestDecodersAgree(t *testing.T) {
	lines := recordLines(t)
	for i, l := range lines[:200] {
		var full record.Full
		var std, goj record.Record
		if err := record.DecodeFullLine(l, &full); err != nil {
			t.Fatal(err)
		}
		fast := full.Record
		if err := json.Unmarshal(l, &std); err != nil {
			t.Fatal(err)
		}
		if err := gojson.Unmarshal(l, &goj); err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(&fast)
		b, _ := json.Marshal(&std)
		c, _ := json.Marshal(&goj)
		if !bytes.Equal(a, b) || !bytes.Equal(b, c) {
			t.Fatalf("line %d: decoders disagree:\n%s\n%s\n%s", i, a, b, c)
		}
	}
}
