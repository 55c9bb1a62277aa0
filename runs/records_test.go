package runs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzScanRecords: the resume scan of RUN/records.jsonl never panics; what it accepts ends at a
// newline (a torn tail is never counted) and names every pair once.
func FuzzScanRecords(f *testing.F) {
	f.Add([]byte(`{"item_id":"a","config":"f8","status":"ok","correct":true}` + "\n"))
	f.Add([]byte(`{"item_id":"a","config":"f8","status":"ok"}` + "\n" + `{"item_id":"b","config":"f8","stat`))
	f.Add([]byte(`{"item_id":"a","config":"f8","status":"error","error":"x"}` + "\n" + `{"item_id":"a","config":"f8","status":"ok"}` + "\n"))
	f.Add([]byte("\n\n garbage \n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		done := pairSet{}
		_, good, err := scanRecordsInto(bytes.NewReader(b), "r.jsonl", done)
		if err != nil {
			return
		}
		if good > int64(len(b)) || (good > 0 && b[good-1] != '\n') {
			t.Fatalf("the kept part (%d of %d bytes) does not end with a newline", good, len(b))
		}
		if n := bytes.Count(b[:good], []byte("\n")); len(done) > n {
			t.Fatalf("%d pairs from %d lines", len(done), n)
		}
	})
}

// ReadAll puts the error records after the answers, each kind in its order (the audit takes the
// answers as that prefix instead of copying them), across inputs, after Supersede.
func TestReadAllErrorsLast(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	b := filepath.Join(dir, "b.jsonl")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(a, `{"item_id":"1","config":"c","status":"error","error":"x"}
{"item_id":"2","config":"c","correct":true}
{"item_id":"3","config":"c","status":"error","error":"y"}
`)
	write(b, `{"item_id":"4","config":"c","correct":false}
{"item_id":"3","config":"c","correct":true}
{"item_id":"5","config":"c","status":"error","error":"z"}
`)
	recs, err := ReadAll(context.Background(), []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.ItemID+r.Status)
	}
	// Item 3's error is superseded by its answer in b.
	if want := "2 4 3 1error 5error"; strings.Join(got, " ") != want {
		t.Errorf("order %q, want %q", strings.Join(got, " "), want)
	}
}
