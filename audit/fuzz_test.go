package audit

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

// FuzzReadRecords: any input gives records that Analyze accepts or rejects with an error, never a panic;
// every error is one line naming the file.
func FuzzReadRecords(f *testing.F) {
	var buf bytes.Buffer
	if err := record.Write(&buf, synth.Records(3, 1)); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"item_id":"a","config":"x","correct":true,"config_meta":{"frames":0,"text_only":false}}`))
	f.Add([]byte(`{"item_id":"a","config":"x","score":0.5,"run":2}` + "\n" + `{"item_id":"a","config":"x","score":0.1,"run":1}`))
	f.Add([]byte(`{"item_id":"a","config":"x\ny","correct":true,"config_meta":{"policy":"p\nq"}}` + "\n" +
		`{"item_id":"b","config":"x\ny","correct":true,"config_meta":{"policy":"r\rs"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		oneLine := func(err error) {
			var ae *record.Error
			if err != nil && (!errors.As(err, &ae) || ae.Path != "fuzz.jsonl" || strings.ContainsAny(err.Error(), "\n\r")) {
				t.Fatalf("error does not name fuzz.jsonl on one line: %q", err)
			}
		}
		recs, err := record.Read(bytes.NewReader(data), "fuzz.jsonl")
		oneLine(err)
		if err != nil || len(recs) == 0 {
			return
		}
		opt := DefaultOptions()
		opt.Resamples = 20
		_, err = Analyze(recs, opt)
		oneLine(err)
	})
}
