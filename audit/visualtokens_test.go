package audit

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// TestVisualTokensWarn: the audit names every config some of whose records the model counted
// otherwise than their frames make, with the median ratio; a config within the band, text-only
// records, records without counts (older sweeps, imports) and records whose seen count is unknown
// are not named. The --strict-tokens error records of a config count (they keep their counts).
func TestVisualTokensWarn(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 4; i++ {
		item := fmt.Sprintf("i%d", i)
		fmt.Fprintf(&b, `{"item_id":%q,"config":"text-only","correct":true}`+"\n", item)
		fmt.Fprintf(&b, `{"item_id":%q,"config":"f16","correct":true,"config_meta":{"frames":16},"visual_tokens":{"expected":96,"seen":%d,"how":"text-only difference","family":"qwen2.5-vl","overhead":2}}`+"\n", item, 95+i%2)
		if i == 3 { // --strict-tokens: an error record keeping its counts
			fmt.Fprintf(&b, `{"item_id":%q,"config":"f64","status":"error","error":"--strict-tokens: server counted 192","error_kind":"runtime","config_meta":{"frames":64},"visual_tokens":{"expected":384,"seen":192,"how":"text-only difference"}}`+"\n", item)
			continue
		}
		fmt.Fprintf(&b, `{"item_id":%q,"config":"f64","correct":false,"config_meta":{"frames":64},"visual_tokens":{"expected":384,"seen":%d,"how":"text-only difference"}}`+"\n", item, 192+i)
		fmt.Fprintf(&b, `{"item_id":%q,"config":"f8","correct":false,"config_meta":{"frames":8},"visual_tokens":{"expected":48,"seen":null,"how":"unknown","why":"no prompt_tokens"}}`+"\n", item)
	}
	recs, err := record.Read(strings.NewReader(b.String()), "r.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Analyze(recs, Options{Seed: 1, Epsilon: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.VisualTokens) != 2 {
		t.Fatalf("checks %+v", res.VisualTokens)
	}
	f16, f64 := res.VisualTokens[0], res.VisualTokens[1]
	if f16.Config != "f16" || f16.Checked != 4 || f16.Outside != 0 || math.Abs(f16.Median-95.5/96) > 1e-12 || f16.Family != "qwen2.5-vl" {
		t.Errorf("f16: %+v", f16)
	}
	if f64.Config != "f64" || f64.Checked != 4 || f64.Outside != 4 || math.Abs(f64.Median-(0.5+0.5/384)) > 1e-12 { // 192, 192, 193, 194 of 384
		t.Errorf("f64: %+v", f64)
	}
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "f64 (median seen/expected 0.50; 4 of 4 pairs outside [0.95, 1.05]; text-only difference)") || strings.Contains(w, "f16 (") || strings.Contains(w, "f8 (") {
		t.Errorf("warnings:\n%s", w)
	}

	// Without counts: no check, no warning, and the JSON has no visual_tokens.
	plain, err := record.Read(strings.NewReader(`{"item_id":"a","config":"c","correct":true}`+"\n"+`{"item_id":"a","config":"d","correct":false,"visual_tokens":96}`), "p.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	res, err = Analyze(plain, Options{Seed: 1, Epsilon: 0.05})
	if err != nil || res.VisualTokens != nil || strings.Contains(strings.Join(res.Warnings, ""), "visual tokens") {
		t.Errorf("no counts: %+v %v %v", res.VisualTokens, res.Warnings, err)
	}
}
