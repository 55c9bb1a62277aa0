package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/bench"
)

// TestBenchResizeCLI runs `framesweep bench resize` once per row (the three cases) and checks
// the JSON rows carry the baselines and the ratios.
func TestBenchResizeCLI(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the 1080p benchmark cases")
	}
	rc, out, errs := runCLI("bench", "resize", "--reps", "1", "--warmup", "1", "--json")
	if rc != 0 {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	var rows []bench.Row
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	var cv, native int
	for _, r := range rows {
		switch {
		case strings.Contains(r.Name, "baseline=opencv"):
			cv++
		case strings.Contains(r.Name, "kernel=pil-bicubic/threads=1"):
			native++
			if _, ok := r.Metric("x-cv-cubic"); !ok {
				t.Errorf("%s: no x-cv-cubic", r.Name)
			}
		}
	}
	if cv != 3 || native < 3 {
		t.Errorf("%d OpenCV baseline rows and %d native rows, want 3 and ≥ 3", cv, native)
	}
	if rc, _, _ := runCLI("bench", "resize", "--reps", "0"); rc == 0 {
		t.Error("--reps 0 accepted")
	}
}
