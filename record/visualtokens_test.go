package record

import (
	"strings"
	"testing"
)

// A record's visual_tokens is read by every reader (Read, DecodeFull), written back as it was read
// (Write and a sweep's Full alike), and held to its rules: counts ≥ 0, a known how and family, a
// seen count exactly when how says how it was found. A record written before the check, with the
// bare count an in-process runtime built, still reads (as that seen count, expected unknown).
func TestVisualTokensRecords(t *testing.T) {
	const base = `{"item_id":"a","config":"f64","status":"ok","correct":true,"video":"v.mp4","runtime":"openai","at":"2026-01-01T00:00:00Z"`
	good := base + `,"visual_tokens":{"expected":2048,"seen":1024,"how":"text-only difference","family":"qwen2.5-vl","overhead":2}}`
	recs, err := Read(strings.NewReader(good), "r.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	v := recs[0].VisualTokens
	if v == nil || *v.Expected != 2048 || *v.Seen != 1024 || v.How != "text-only difference" || v.Family != "qwen2.5-vl" || v.Overhead != 2 {
		t.Fatalf("read %+v", v)
	}
	if r, ok := v.Ratio(); !ok || r != 0.5 || !v.Outside() {
		t.Errorf("ratio %v %v, outside %v", r, ok, v.Outside())
	}
	var sb strings.Builder
	if err := Write(&sb, recs); err != nil {
		t.Fatal(err)
	}
	if want := `"visual_tokens":{"expected":2048,"seen":1024,"how":"text-only difference","family":"qwen2.5-vl","overhead":2}`; !strings.Contains(sb.String(), want) {
		t.Errorf("written %s, want %s in it", sb.String(), want)
	}
	again, err := Read(strings.NewReader(sb.String()), "w.jsonl")
	if err != nil || *again[0].VisualTokens.Seen != 1024 {
		t.Fatalf("re-read: %v", err)
	}
	f, err := DecodeFull([]byte(good), Source{Path: "r.jsonl", Line: 1})
	if err != nil || f.VisualTokens == nil || *f.VisualTokens.Expected != 2048 {
		t.Fatalf("DecodeFull: %+v %v", f, err)
	}

	old, err := DecodeFull([]byte(base+`,"visual_tokens":96}`), Source{Path: "old.jsonl", Line: 1})
	if err != nil {
		t.Fatal(err)
	}
	if o := old.VisualTokens; o == nil || o.Expected != nil || *o.Seen != 96 || o.How != VisualRuntime || o.Outside() {
		t.Errorf("an old bare count read as %+v", o)
	}
	unknown := base + `,"visual_tokens":{"expected":null,"seen":null,"how":"unknown","why":"unknown family"}}`
	if u, err := DecodeFull([]byte(unknown), Source{}); err != nil || u.VisualTokens.Outside() {
		t.Errorf("unknown counts: %v", err)
	}
	exact := &VisualTokens{Expected: ptr(16), Seen: ptr(17), How: VisualRuntime}
	if !exact.Outside() {
		t.Error("an in-process count one off is not outside")
	}

	for _, tc := range []struct{ add, want string }{
		{`,"visual_tokens":-3`, "negative"},
		{`,"visual_tokens":1.5`, "visual_tokens"},
		{`,"visual_tokens":"96"`, "visual_tokens"},
		{`,"visual_tokens":[96]`, "visual_tokens"},
		{`,"visual_tokens":{"expected":-1,"seen":2,"how":"tokenize"}`, "negative"},
		{`,"visual_tokens":{"expected":1,"seen":2,"how":"guessed"}`, "how"},
		{`,"visual_tokens":{"expected":1,"seen":null,"how":"tokenize"}`, "go together"},
		{`,"visual_tokens":{"expected":1,"seen":1,"how":"unknown"}`, "go together"},
		{`,"visual_tokens":{"expected":1,"seen":1,"how":"tokenize","family":"gemma"}`, "family"},
		{`,"visual_tokens":{"expected":"1","seen":1,"how":"tokenize"}`, "visual_tokens"},
		{`,"visual_tokens":{"expected":1,"expected":2,"seen":1,"how":"tokenize"}`, "twice"},
		{`,"visual_tokens":{"expected":1,"seen":1,"how":"tokenize","why":"` + strings.Repeat("w", MaxVisualWhyBytes+1) + `"}`, "why"},
	} {
		line := base + tc.add + "}"
		_, err := Read(strings.NewReader(line), "r.jsonl")
		if err == nil || !strings.HasPrefix(err.Error(), "r.jsonl:1: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read %s: %v (want %q)", tc.add, err, tc.want)
		}
		if _, err := DecodeFull([]byte(line), Source{Path: "r.jsonl", Line: 1}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DecodeFull %s: %v", tc.add, err)
		}
	}
	// An error record (--strict-tokens) keeps its check.
	strict := `{"item_id":"a","config":"f64","status":"error","error":"server counted 1,024 visual tokens","error_kind":"runtime",` +
		`"visual_tokens":{"expected":2048,"seen":1024,"how":"tokenize"}}`
	if recs, err := Read(strings.NewReader(strict), "r.jsonl"); err != nil || recs[0].VisualTokens == nil {
		t.Errorf("an error record with its check: %v", err)
	}
}

func ptr(v int) *int { return &v }
