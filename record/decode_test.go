package record_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

// decodeSeeds are the lines where a JSON decoder is most likely to part from encoding/json: escapes,
// duplicate and case-folded keys, numbers out of range or of the wrong kind, invalid UTF-8, trailing data.
var decodeSeeds = []string{
	`{"item_id":"a","config":"f16","status":"error","error":"video not found: x.mp4","input_sha256":"ab","probs":{"A":0.5}}`,
	`{"item_id":"a","config":"f16","status":"ok","correct":true,"timestamps_s":[0.1],"response":"B"}`,
	`{"item_id":"videomme-001-1","config":"f16","correct":true,"prediction":"B","answer":"B","confidence":0.83,"score":null,"category":"Counting Problem","duration":"short","config_meta":{"frames":16,"text_only":false,"width":448,"height":448,"policy":"uniform","seed":null,"pipeline":"raw","indices":[0,5,9]},"latency_s":0.91}`,
	` { "item_id" : "a\"b\\c\/d\n" , "config":"x", "run": 2, "score": 1e-3, "extra": {"nested": [1, {"x": null}, "s"]}, "more": [] } `,
	`{"item_id":"é","config":"x","correct":false,"config_meta":null}`,
	`{"item_id":"a","config":"x","correct":true,"Config":"y"}`,
	`{"item_id":"a","item_id":"b","config":"x","correct":true}`,
	`{"item_id":"a","config":"x","run":1.0,"correct":true}`,
	`{"item_id":"a\u00e9","config":"x","correct":true}`,
	`{"item_id":"a","config":"x","correct":true,"config_meta":{"frames":8},"config_meta":{"width":4}}`,
	`{"item_id":"a","config":"x","correct":"yes"}`,
	`{"item_id":"a","config":"x","correct":true} x`,
	`{"item_id":"a","config":"x","confidence":1e999}`,
	`{"item_id":"a","config":"x","run":99999999999999999999}`,
	`{"item_id":null,"config":"x","correct":true,"config_meta":{"indices":null,"frames":-0}}`,
	`{"item_id":"a","config":"x","correct":true,"harness":{"metric":"lmms-eval mlvu_dev mlvu_percetion_score (M-avg over 7 task types)","kind":"macro","value":42.97,"counted":2174}}`,
	`{"item_id":"a","config":"x","correct":false,"harness":{"metric":"m","kind":"micro","value":50,"counted":3,"left_out":1,"skip":true,"flipped":true}}`,
	`{"item_id":"a","config":"x","correct":true,"harness":{"metric":"m","value":null,"counted":1.5}}`,
	`{"item_id":"a","config":"x","correct":true,"harness":{"metric":"m","Kind":"micro","extra":[1],"counted":99999999999999999999}}`,
	`{"item_id":"a","config":"x","correct":true,"harness":null}`,
	`{"item_id":"a","config":"x","correct":true,"input_mode":"video","video_fps":2,"video_fps_source":"given","video_timestamps_s":[0,0.5],"visual_tokens":64,"visual_groups":[{"frames":[0,1],"tokens":32,"grid_h":4,"grid_w":8,"pos_start":5,"pos_t":5,"prefix":"<0.0 seconds>"}]}`,
	`{"item_id":"a","config":"x","correct":true,"video_fps":"2"}`,
	`{"item_id":"a","config":"x","correct":true,"visual_tokens":{"expected":2048,"seen":null,"how":"unknown","family":"qwen3-vl","why":"w"}}`,
	`{"item_id":"a","config":"x","correct":true,"visual_tokens":{"Expected":1,"seen":1,"how":"tokenize","extra":[1]}}`,
	`{"item_id":"a","config":"x","correct":true,"visual_tokens":"64"}`,
	`{"item_id":"a","config":"x","correct":true,"visual_tokens":null}`,
	`{"item_id":"a","config":"x","correct":true,"visual_tokens": 1e2}`,
	`{"item_id":"a","config":"x","correct":true,"visual_groups":[{"frames":["0"]}]}`,
	`{"item_id":"a","config":"x","correct":true,"visual_groups":{"frames":[0]}}`,
	`{"item_id":"a","config":"x","correct":true,"model_sha256":{"model":1},"probs":{"A":"0.5"}}`,
	`{"item_id":"a","config":"x","correct":true,"width":1.5,"stream_index":-1,"at":5}`,
	`{"item_id":"a","config":"x","correct":false,"template":"generic","response":"SADh E D"}`,
	`{"item_id":"a","config":"x","correct":false,"unparsed":true,"prediction":""}`,
	`null`, `[]`, `{}`, `{"ſcore":1}`, "{\"item_id\":\"a\xff\"}", `{"item_id":"a","config":"x","x":01}`,
}

// decodeBoth requires the record decoder (go-json) to agree with encoding/json on
// line: the same error or none, and the same record and provenance.
func decodeBoth(t *testing.T, line []byte) {
	var ref record.Full
	refErr := json.Unmarshal(line, &ref)
	ref.Upgrade() // what every reader does after decoding
	var got record.Full
	err := record.DecodeFullLine(line, &got)
	if (err == nil) != (refErr == nil) || (err == nil && !reflect.DeepEqual(got, ref)) {
		t.Fatalf("decode(%q) = %+v, %v; encoding/json %+v, %v", line, got, err, ref, refErr)
	}
}

func TestDecodeRecordMatchesEncodingJSON(t *testing.T) {
	for _, s := range decodeSeeds {
		decodeBoth(t, []byte(s))
	}
	var buf bytes.Buffer
	if err := record.Write(&buf, synth.Records(50, 3)); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		decodeBoth(t, []byte(line))
	}
}

// FuzzDecodeRecord: the record decoder never disagrees with encoding/json (and never panics).
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeBoth(t, data)
	})
}
