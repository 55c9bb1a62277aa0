package record

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// compactCases are records with every field of Record, ConfigMeta, Harness and CascadeStep set on
// some of them, and config_meta values that differ from a shared one in one field each.
func compactCases(t *testing.T) []Record {
	t.Helper()
	i := func(v int) *int { return &v }
	f := func(v float64) *float64 { return &v }
	b := func(v bool) *bool { return &v }
	s64 := int64(7)
	meta := ConfigMeta{Frames: i(8), TextOnly: b(false), Width: i(448), Height: i(448), Policy: "uniform", Preset: "p",
		Seed: &s64, Pipeline: "raw", Loader: "lmms-eval", MaxPixels: i(200704)}
	base := Record{ItemID: "i", Config: "f8", Status: StatusOK, Run: i(1), Correct: b(true), Prediction: "B", Answer: "B",
		Confidence: f(0.5), Category: "cat", Duration: "short", QuestionID: "q", Task: "videomme", DocHash: "d",
		ConfigMeta: &meta, LatencyS: f(0.25), Model: "m", WeightsSHA256: strings.Repeat("ab", 32), ContextTokens: i(4096),
		Origin:  &Origin{SourceTag: "official_release", ProtocolNote: "fallback input 336"},
		Harness: &Harness{Metric: "h", Kind: HarnessMicro, Value: 50, Counted: 3, LeftOut: 1, Skip: true, Flipped: true},
		Cascade: &CascadeStep{Threshold: 0.5, Budgets: []int{4, 8}, Step: 2, Final: true, StoppedAt: 8, FramesFed: 12, FramesDistinct: 10, StepBuildS: 0.1, StepWallS: 0.2}}
	var out []Record
	add := func(r Record) {
		r.ItemID = fmt.Sprintf("item-%03d", len(out))
		out = append(out, r)
	}
	add(base)
	add(base) // the same config_meta and harness text: shared
	// One config_meta field changed at a time (by reflection, so a field added later is covered).
	mv := reflect.ValueOf(meta)
	for k := 0; k < mv.NumField(); k++ {
		m := meta
		fv := reflect.ValueOf(&m).Elem().Field(k)
		switch fv.Kind() {
		case reflect.String:
			fv.SetString(fv.String() + "-x")
		case reflect.Pointer:
			e := reflect.New(fv.Type().Elem())
			switch e.Elem().Kind() {
			case reflect.Bool:
				e.Elem().SetBool(!fv.Elem().Bool())
			default:
				e.Elem().SetInt(fv.Elem().Int() + 1)
			}
			fv.Set(e)
		case reflect.Slice:
			fv.Set(reflect.ValueOf([]int{3, 1, 4}))
		default:
			t.Fatalf("ConfigMeta.%s: a kind this test does not vary", mv.Type().Field(k).Name)
		}
		if m.TextOnly != nil && *m.TextOnly {
			m.Frames = i(0)
		}
		r := base
		r.ConfigMeta = &m
		add(r)
		add(r)
	}
	open := base
	open.Correct, open.Score, open.Harness = nil, f(0.75), nil
	add(open)
	vt := base
	vt.VisualTokens = &VisualTokens{Expected: i(2048), Seen: i(1024), How: "tokenize", Family: "qwen2.5-vl", Overhead: 2, Why: "w"}
	add(vt)
	unparsed := base
	unparsed.Correct, unparsed.Prediction, unparsed.Unparsed = b(false), "", true
	add(unparsed)
	fail := Record{Config: "f8", Status: StatusError, Error: "boom", ErrorKind: ErrorRuntime, OverContext: true, Model: "m2", ContextTokens: i(2048)}
	add(fail)
	add(fail)
	return out
}

// Reading shares what records repeat, and must give the values a plain decode of each line gives: for
// every field (one a reader does not share, or shares under a key missing a field, fails here).
func TestReadCompactKeepsEveryValue(t *testing.T) {
	recs := compactCases(t)
	set := map[string]bool{}
	for k := range recs {
		markSet(reflect.ValueOf(recs[k]), set)
	}
	for _, typ := range []reflect.Type{reflect.TypeOf(Record{}), reflect.TypeOf(ConfigMeta{}), reflect.TypeOf(Harness{}), reflect.TypeOf(CascadeStep{}), reflect.TypeOf(Origin{}), reflect.TypeOf(VisualTokens{})} {
		for k := 0; k < typ.NumField(); k++ {
			if name := typ.Name() + "." + typ.Field(k).Name; typ.Field(k).Tag.Get("json") != "-" && !set[name] {
				t.Errorf("no case sets %s: add it to compactCases", name)
			}
		}
	}
	var sb strings.Builder
	if err := Write(&sb, recs); err != nil {
		t.Fatal(err)
	}
	got, err := Read(strings.NewReader(sb.String()), "c.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(sb.String()), "\n")
	if len(got) != len(lines) {
		t.Fatalf("%d records of %d lines", len(got), len(lines))
	}
	shared := 0
	for k, line := range lines {
		var want Record
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatal(err)
		}
		want.Source = Source{Path: "c.jsonl", Line: k + 1}
		if !reflect.DeepEqual(got[k], want) {
			a, _ := json.Marshal(got[k])
			t.Errorf("line %d:\n read %s\n want %s", k+1, a, line)
		}
		if k > 0 && got[k].ConfigMeta != nil && got[k].ConfigMeta == got[k-1].ConfigMeta {
			shared++
		}
	}
	if shared == 0 {
		t.Error("no config_meta shared between records of the same config")
	}
}

// markSet notes the fields of v (and of the structs it points to) that are not zero.
func markSet(v reflect.Value, set map[string]bool) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	for k := 0; k < v.NumField(); k++ {
		fv := v.Field(k)
		if !fv.IsZero() {
			set[v.Type().Name()+"."+v.Type().Field(k).Name] = true
		}
		markSet(fv, set)
	}
}

// A malformed line with a second top-level object that names config_meta again, left open, once
// paired the second value's start with the first value's end and sliced past it (a panic that
// FuzzReadRecords found). It is a syntax error naming its line, on the first read and after a
// well-formed line made its config_meta text known.
func TestReadSecondTopLevelValue(t *testing.T) {
	good := `{"item_id":"a","config":"x","correct":true,"config_meta":{"frames":8,"width":448}}`
	bad := `{"item_id":"b","config":"x","config_meta":{"frames":8,"width":448}}  {"item_id":"c","config_meta":{"frames":99999`
	for _, in := range []string{bad, good + "\n" + bad} {
		_, err := Read(strings.NewReader(in), "two.jsonl")
		if err == nil || !strings.Contains(err.Error(), "two.jsonl") {
			t.Fatalf("%q: err = %v, want a syntax error naming two.jsonl", in, err)
		}
	}
	spans := make([]span, 1)
	if err := scanJSON([]byte(bad), []string{"config_meta"}, spans); err != nil || spans[0].found() {
		t.Fatalf("scanJSON: err %v, span %+v: want the open second value not found", err, spans[0])
	}
}
