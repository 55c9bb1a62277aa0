package ingest

import (
	"fmt"
	"strings"
	"testing"
)

// TestDurationBins: durations in seconds become groups (Video-MME's by default, or the edges given);
// names a harness already gives are kept; a bad bin list is refused naming the forms it takes.
func TestDurationBins(t *testing.T) {
	cases := []struct {
		spec string
		in   []string
		want []string
	}{
		{"videomme", []string{"59.9", "120", "121", "334.5", "900", "3600", "short", ""}, []string{"short", "short", "medium", "medium", "medium", "long", "short", ""}},
		{"120,900", []string{"30", "500", "901"}, []string{"≤120s", "120–900s", ">900s"}},
		{"brief:180,rest", []string{"30", "500"}, []string{"brief", "rest"}},
		{"none", []string{"334.5"}, []string{"334.5"}},
	}
	for _, c := range cases {
		b, err := ParseDurationBins(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		for i, in := range c.in {
			if got, err := b.group(in); err != nil || got != c.want[i] {
				t.Errorf("%s: %q → %q (%v), want %q", c.spec, in, got, err, c.want[i])
			}
		}
	}
	for _, bad := range []string{"900,120", "short:120,medium:900", "x", "0,10", "a:b,c"} {
		if _, err := ParseDurationBins(bad); err == nil || !strings.Contains(err.Error(), "--duration-bins") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// lmms-eval's MLVU doc gives the video's length in seconds: 334 distinct values once made 334
	// one-item groups; binned, they are Video-MME's three.
	var lines []string
	for i, d := range []float64{95.5, 334.5, 2900} {
		lines = append(lines, fmt.Sprintf(`{"doc_id": %d, "doc": {"duration": %g, "question": "q%d"}, "target": "A", "filtered_resps": "A", "mlvu_percetion_score": {"question_id": "q%d", "task_type": "count", "pred_answer": "A", "answer": "A"}}`, i, d, i, i))
	}
	b, _ := ParseDurationBins("videomme")
	res, err := LmmsEval(strings.NewReader(strings.Join(lines, "\n")+"\n"), "x_samples_mlvu_dev.jsonl", Options{Config: "f8", Durations: b})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"short", "medium", "long"} {
		if res.Records[i].Duration != want {
			t.Errorf("record %d: duration %q, want %q", i, res.Records[i].Duration, want)
		}
	}
}
