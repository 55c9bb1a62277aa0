package audit

import (
	"bytes"
	"testing"
)

// FuzzReadRecords: any input gives records that Analyze accepts or rejects with an error, never a panic.
func FuzzReadRecords(f *testing.F) {
	var buf bytes.Buffer
	_ = WriteRecords(&buf, Synthetic(3, 1))
	f.Add(buf.Bytes())
	f.Add([]byte(`{"item_id":"a","config":"x","correct":true,"config_meta":{"frames":0,"text_only":false}}`))
	f.Add([]byte(`{"item_id":"a","config":"x","score":0.5,"run":2}` + "\n" + `{"item_id":"a","config":"x","score":0.1,"run":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadRecords(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil || len(recs) == 0 {
			return
		}
		opt := DefaultOptions()
		opt.Resamples = 20
		_, _ = Analyze(recs, opt)
	})
}
