package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCheckLine: what every reader of records refuses before decoding a line.
func TestCheckLine(t *testing.T) {
	for in, want := range map[string]error{
		`{"item_id":"a","config":"c","correct":true}`:                            nil,
		`{"item_id":"a\ud83d\ude00","config":"c"}`:                               nil, // a surrogate pair
		`{"item_id":"a\\udc80","config":"c"}`:                                    nil, // an escaped backslash, then text
		`{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":1}]}`:                        nil, // the same key in different objects
		"{\"item_id\":\"a\xff\",\"config\":\"c\"}":                               ErrSyntax,
		`{"item_id":"a\udc80","config":"c"}`:                                     ErrSyntax,
		`{"item_id":"a\ud800","config":"c"}`:                                     ErrSyntax,
		`{"item_id":"a\ud800\u0041","config":"c"}`:                               ErrSyntax,
		`{"item_id":"a","config":"c","item_id":"b"}`:                             ErrSyntax,
		`{"item_id":"a","config_meta":{"frames":8,"frames":16}}`:                 ErrSyntax,
		`{"item_id":"a","\u0069tem_id":"b"}`:                                     ErrSyntax, // the same key escaped
		`{"item_id":"a","response":"` + strings.Repeat("x", MaxLineBytes) + `"}`: ErrTooLong,
	} {
		err := CheckLine([]byte(in))
		if (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
			t.Errorf("%.80q: %v, want %v", in, err, want)
		}
	}
}

// TestCanonicalNumbersByValue: one value, one canonical form; two values, two.
func TestCanonicalNumbersByValue(t *testing.T) {
	same := [][]string{
		{`0.5`, `5e-1`, `0.50`, `50E-2`},
		{`1000`, `1e3`, `1000.0`, `1.0e+3`},
		{`-0`, `0`, `0.0`, `0e7`},
		{`{"b":[1,2.0],"a":{"y":1e0,"x":null}}`, `{ "a" : { "x" : null , "y" : 1 } , "b" : [ 1.0 , 2 ] }`},
		{`9007199254740993`},
	}
	seen := map[string]string{}
	for _, group := range same {
		first, err := Canonical([]byte(group[0]))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range group[1:] {
			if c, err := Canonical([]byte(v)); err != nil || !bytes.Equal(c, first) {
				t.Errorf("%s → %s, %s → %s (%v)", group[0], first, v, c, err)
			}
		}
		if prev, dup := seen[string(first)]; dup {
			t.Errorf("%s and %s have one canonical form %s", prev, group[0], first)
		}
		seen[string(first)] = group[0]
	}
	if a, b := CanonicalNumber("0.1"), CanonicalNumber("0.10000000000000002"); a == b {
		t.Errorf("two float64 values, one form %s", a)
	}
}

// TestSupersede: an answer supersedes its pair's error records; of errors alone the last stays; other
// pairs and runs are untouched.
func TestSupersede(t *testing.T) {
	yes, run1 := true, 1
	recs := []Record{
		{ItemID: "a", Config: "c", Status: StatusError, Error: "1"},
		{ItemID: "b", Config: "c", Status: StatusError, Error: "first"},
		{ItemID: "a", Config: "c", Status: StatusOK, Correct: &yes},
		{ItemID: "b", Config: "c", Status: StatusError, Error: "second"},
		{ItemID: "a", Config: "c", Run: &run1, Status: StatusError, Error: "rerun"},
		{ItemID: "d", Config: "c", Correct: &yes},
		// Other models' and other splits' records of one item id are other pairs (issue 39).
		{ItemID: "b", Config: "c", Model: "m2", Status: StatusError, Error: "m2"},
		{ItemID: "b", Config: "c", Task: "v2", Status: StatusError, Error: "v2"},
		{ItemID: "a", Config: "c", Task: "v2", Status: StatusError, Error: "v2"},
	}
	out, n := Supersede(recs)
	var got []string
	for _, r := range out {
		got = append(got, r.ItemID+"/"+r.Status+"/"+r.Error)
	}
	if n != 2 || strings.Join(got, " ") != "a/ok/ b/error/second a/error/rerun d// b/error/m2 b/error/v2 a/error/v2" {
		t.Fatalf("%d dropped: %v", n, got)
	}
	// Another model's records, or the same id in another split, are other pairs: three RUNs of three
	// models, each with its error records, keep them all (issue 39: a multi-model audit kept only the
	// last model's), and an answer in split V2 supersedes nothing of V1.
	recs = nil
	for _, m := range []string{"llama", "qwen", "intern"} {
		recs = append(recs, Record{ItemID: "a", Config: "f8", Model: m, Status: StatusError, Error: m},
			Record{ItemID: "a", Config: "f4", Model: m, Correct: &yes})
	}
	recs = append(recs, Record{ItemID: "a", Config: "f8", Model: "llama", Task: "V2", Correct: &yes})
	out, n = Supersede(recs)
	if n != 0 || len(out) != 7 {
		t.Fatalf("models and tasks: %d dropped, %d kept", n, len(out))
	}
	recs = append(recs, Record{ItemID: "a", Config: "f8", Model: "qwen", Correct: &yes})
	if out, n = Supersede(recs); n != 1 || len(out) != 7 {
		t.Fatalf("qwen's answer: %d dropped", n)
	}
	for _, r := range out {
		if r.Failed() && r.Model == "qwen" {
			t.Fatalf("qwen's error record kept beside its answer")
		}
	}
}

// TestReadAndWriteRefuse: the audit's reader and the importers' writer hold records to the
// validator: invalid UTF-8, a wrong type, an error_kind on an answer, an unknown error_kind.
func TestReadAndWriteRefuse(t *testing.T) {
	for _, line := range []string{
		"{\"item_id\":\"a\xff\",\"config\":\"c\",\"correct\":true}",
		`{"item_id":"a","config":"c","correct":"true"}`,
		`{"item_id":"a","config":"c","correct":true,"error_kind":"transient"}`,
		`{"item_id":"a","config":"c","status":"error","error":"x","error_kind":"sometimes"}`,
		`{"item_id":"a","config":"c","correct":true,"correct":false}`,
	} {
		if _, err := Read(strings.NewReader(line), "r.jsonl"); err == nil || !strings.HasPrefix(err.Error(), "r.jsonl:1") {
			t.Errorf("%q read: %v", line, err)
		}
	}
	yes := true
	for _, r := range []Record{
		{ItemID: "a\xff", Config: "c", Correct: &yes},
		{ItemID: "a", Config: "c", Status: StatusError, Error: "x", ErrorKind: "never"},
	} {
		if err := Write(io.Discard, []Record{r}); err == nil {
			t.Errorf("%+v written", r)
		}
	}
	ok := Record{ItemID: "a", Config: "c", Status: StatusError, Error: "x", ErrorKind: ErrorTransient}
	var buf bytes.Buffer
	if err := Write(&buf, []Record{ok}); err != nil || !strings.Contains(buf.String(), `"error_kind":"transient"`) {
		t.Fatalf("%q %v", buf.String(), err)
	}
}

// dupKeysRef reports whether some object of the JSON value b holds a key twice, by encoding/json's
// tokens (the reference the hand-written scan is held to).
func dupKeysRef(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type level struct {
		obj     bool
		keys    map[string]bool
		wantKey bool
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		top := (*level)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.obj {
					top.wantKey = true
				}
				stack = append(stack, &level{obj: v == '{', keys: map[string]bool{}, wantKey: true})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].wantKey = true
				}
			}
		case string:
			if top != nil && top.obj && top.wantKey {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.wantKey = false
				continue
			}
			if top != nil && top.obj {
				top.wantKey = true
			}
		default:
			if top != nil && top.obj {
				top.wantKey = true
			}
		}
	}
}

// FuzzCheckLine: CheckLine never panics; on valid JSON it finds a key twice exactly when
// encoding/json's tokens show one, and it accepts no invalid UTF-8.
func FuzzCheckLine(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":{"a":2}}`, `{"a":1,"a":2}`, `[{"k":"\ud800"}]`, "{\"a\":\"\xff\"}", `{"a":"\\"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := CheckJSON(b)
		if err == nil && !utf8.Valid(b) {
			t.Fatalf("%q: invalid UTF-8 accepted", b)
		}
		if !json.Valid(b) || !utf8.Valid(b) {
			return
		}
		dup := err != nil && strings.Contains(err.Error(), "twice")
		if ref := dupKeysRef(b); ref != dup && !(ref && err != nil) {
			t.Fatalf("%q: duplicate keys: reference %v, CheckJSON %v", b, ref, err)
		}
	})
}

// The fields of issues 25 and 26 (model, weights_sha256, context_tokens, over_context,
// config_meta.loader; a sweep's input_mode, video_fps, video_fps_source, video_timestamps_s,
// visual_tokens, visual_groups) are checked by type and value by every reader: the audit's (Read) and
// a sweep's, merge's and resume's (DecodeFull). Each refusal names the file, the line and the field.
func TestNewFieldsValidated(t *testing.T) {
	const base = `{"item_id":"a","config":"c","status":"ok","correct":true,"video":"v.mp4","runtime":"llamacpp","at":"2026-01-01T00:00:00Z"`
	good := base + `,"model":"qwen2.5-vl-3b","weights_sha256":"` + strings.Repeat("0f", 32) + `","context_tokens":4096,` +
		`"config_meta":{"frames":8,"loader":"qwen-vl-utils"},"input_mode":"video","input_form":"sglang-video-mp4","video_fps":2,"video_fps_source":"sample_fps",` +
		`"video_warnings":["sglang: resized"],` +
		`"video_timestamps_s":[0,1.5],"visual_tokens":128,"visual_groups":[{"frames":[0,1],"tokens":64,"grid_h":8,"grid_w":8,"pos_start":14,"pos_t":14,"prefix":"<0.0 seconds>"}]}`
	if _, err := Read(strings.NewReader(good), "r.jsonl"); err != nil {
		t.Fatalf("a sweep's line refused: %v", err)
	}
	if _, err := DecodeFull([]byte(good), Source{Path: "r.jsonl", Line: 1}); err != nil {
		t.Fatalf("a sweep's line refused by DecodeFull: %v", err)
	}
	over := `{"item_id":"a","config":"c","status":"error","error":"too long","error_kind":"runtime","over_context":true,"model":"m","context_tokens":512,"video":"v.mp4","runtime":"llamacpp","at":"x"}`
	if _, err := DecodeFull([]byte(over), Source{Path: "r.jsonl", Line: 1}); err != nil {
		t.Fatalf("an over_context error record refused: %v", err)
	}
	for _, tc := range []struct{ add, field string }{
		{`,"model":5`, "model"},
		{`,"model":"` + strings.Repeat("m", MaxModelBytes+1) + `"`, "model"},
		{`,"weights_sha256":"ABC"`, "weights_sha256"},
		{`,"weights_sha256":["x"]`, "weights_sha256"},
		{`,"context_tokens":0`, "context_tokens"},
		{`,"context_tokens":"4096"`, "context_tokens"},
		{`,"over_context":true`, "over_context"},
		{`,"over_context":"yes"`, "over_context"},
		{`,"config_meta":{"loader":7}`, "loader"},
		{`,"config_meta":{"loader":"` + strings.Repeat("l", MaxLoaderBytes+1) + `"}`, "loader"},
		{`,"input_mode":"frames"`, "input_mode"},
		{`,"input_mode":1`, "input_mode"},
		{`,"input_form":"pairs"`, "input_form"},
		{`,"input_form":2`, "input_form"},
		{`,"video_warnings":"x"`, "video_warnings"},
		{`,"video_fps":"2","video_fps_source":"given"`, "video_fps"},
		{`,"video_fps":-1,"video_fps_source":"given"`, "video_fps"},
		{`,"video_fps":2`, "video_fps"},
		{`,"video_fps":2,"video_fps_source":"guessed"`, "video_fps_source"},
		{`,"video_timestamps_s":[0,-1]`, "video_timestamps_s"},
		{`,"video_timestamps_s":"0,1"`, "video_timestamps_s"},
		{`,"visual_tokens":-3`, "visual_tokens"},
		{`,"visual_tokens":1.5`, "visual_tokens"},
		{`,"visual_groups":[{"frames":[-1],"tokens":1}]`, "visual_groups"},
		{`,"visual_groups":[{"frames":["0"]}]`, "visual_groups"},
		{`,"visual_groups":{"frames":[0]}`, "visual_groups"},
		{`,"input_sha256":"xyz"`, "input_sha256"},
		{`,"probs":{"A":1.5}`, "probs"},
	} {
		line := base + tc.add + "}"
		_, err := Read(strings.NewReader(`{"item_id":"z","config":"c","correct":true}`+"\n"+line), "r.jsonl")
		if err == nil || !strings.HasPrefix(err.Error(), "r.jsonl:2: ") || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("Read %s: %v", tc.add, err)
		}
		_, err = DecodeFull([]byte(line), Source{Path: "r.jsonl", Line: 2})
		if err == nil || !strings.HasPrefix(err.Error(), "r.jsonl:2: ") || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("DecodeFull %s: %v", tc.add, err)
		}
	}
}

// TestDecodingValidated: a record's decoding (issue 32: the sampling settings of its RUN) is checked by
// type and value by every reader; a record without it (written before it was recorded) still reads.
func TestDecodingValidated(t *testing.T) {
	const base = `{"item_id":"a","config":"c","status":"ok","correct":true,"video":"v.mp4","runtime":"llamacpp","at":"2026-01-01T00:00:00Z"`
	for _, line := range []string{base + `}`, base + `,"decoding":{"temperature":0.7,"seed":-3,"max_tokens":32}}`} {
		f, err := DecodeFull([]byte(line), Source{Path: "r.jsonl", Line: 1})
		if err != nil {
			t.Fatalf("%s refused: %v", line, err)
		}
		if _, err := Read(strings.NewReader(line), "r.jsonl"); err != nil {
			t.Fatalf("Read %s: %v", line, err)
		}
		if strings.Contains(line, "decoding") && (f.Decoding == nil || *f.Decoding != Decoding{Temperature: 0.7, Seed: -3, MaxTokens: 32}) {
			t.Fatalf("decoding read as %+v", f.Decoding)
		}
	}
	for _, add := range []string{
		`,"decoding":{"temperature":-1,"seed":0,"max_tokens":32}`,
		`,"decoding":{"temperature":0,"seed":0,"max_tokens":0}`,
		`,"decoding":{"temperature":"0","seed":0,"max_tokens":32}`,
		`,"decoding":{"temperature":0,"seed":1.5,"max_tokens":32}`,
		`,"decoding":[0,0,32]`,
		`,"decoding":{"temperature":0,"temperature":1,"seed":0,"max_tokens":32}`,
	} {
		line := base + add + "}"
		_, err := DecodeFull([]byte(line), Source{Path: "r.jsonl", Line: 2})
		if err == nil || !strings.HasPrefix(err.Error(), "r.jsonl:2: ") || !strings.Contains(err.Error(), "temperature") && !strings.Contains(err.Error(), "decoding") {
			t.Errorf("DecodeFull %s: %v", add, err)
		}
		if _, err := Read(strings.NewReader(line), "r.jsonl"); err == nil {
			t.Errorf("Read %s: accepted", add)
		}
	}
}

// TestUnparsed: an unparsed answer is a wrong multiple-choice answer, never a correct one or a
// score; a sweep record from before the field (its template named, its letter empty) reads as one.
func TestUnparsed(t *testing.T) {
	for _, bad := range []string{
		`{"item_id":"a","config":"x","correct":true,"unparsed":true}`,
		`{"item_id":"a","config":"x","score":0.5,"unparsed":true}`,
		`{"item_id":"a","config":"x","status":"error","error":"boom","unparsed":true}`,
	} {
		if _, err := DecodeFull([]byte(bad), Source{Path: "r.jsonl", Line: 1}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", bad, err)
		}
	}
	for line, want := range map[string]bool{
		`{"item_id":"a","config":"x","correct":false,"template":"generic","response":"SADh E D"}`:           true,
		`{"item_id":"a","config":"x","correct":false,"template":"generic","response":"B","prediction":"B"}`: false,
		`{"item_id":"a","config":"x","correct":false}`:                                                      false, // no template: not a sweep's answer
		`{"item_id":"a","config":"x","score":0.2,"template":"generic","response":"a cat"}`:                  false,
		`{"item_id":"a","config":"x","correct":false,"unparsed":true,"prediction":"I cannot tell"}`:         true,
	} {
		f, err := DecodeFull([]byte(line), Source{Path: "r.jsonl", Line: 1})
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if f.Unparsed != want {
			t.Errorf("%s: unparsed %v, want %v", line, f.Unparsed, want)
		}
		recs, err := Read(strings.NewReader(line+"\n"), "r.jsonl")
		if err != nil || len(recs) != 1 || recs[0].Unparsed != want {
			t.Errorf("Read %s: %+v, %v; want unparsed %v", line, recs, err, want)
		}
	}
}
