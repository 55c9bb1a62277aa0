package runs

import (
	"bytes"
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
		done, good, err := scanRecords(bytes.NewReader(b), "r.jsonl")
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
