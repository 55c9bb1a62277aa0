package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// auditUnparsed is the part of `audit --json` these tests read.
type auditUnparsed struct {
	Items    int                `json:"items"`
	Accuracy map[string]float64 `json:"accuracy"`
	Unparsed struct {
		Count  int                `json:"count"`
		Share  map[string]float64 `json:"share"`
		Mostly []string           `json:"mostly_unparsed"`
	} `json:"unparsed"`
	Warnings []string `json:"warnings"`
}

// TestReadmeSweepParses reads the README's sweep (the shared demo RUN: the tiny test model,
// examples/sweep-grid.yaml, examples/items.jsonl, the default template; its --jobs 2 and --log-format
// json change no record): the tiny model's replies parse to letters (its accuracy is
// noise, but not 0 because of parsing) and no config is mostly unparsed. The same sweep with a template whose
// official scorer finds no letter in those replies (mlvu: no ")") gives configs of unparsed answers only,
// and the audit warns (every config, 100%), without failing.
func TestReadmeSweepParses(t *testing.T) {
	t.Parallel()
	spec, run := demoRun(t)
	dir := t.TempDir()
	recs := swRecords(t, run)
	parsed := 0
	for _, r := range recs {
		if r.Prediction != "" {
			parsed++
		}
	}
	if parsed*2 < len(recs) {
		t.Errorf("%d of %d replies parsed to a letter (e.g. %q)", parsed, len(recs), recs["bear-1|text-only"].Response)
	}
	a := auditJSON(t, run)
	// The two-option items' replies name neither A nor B (unparsed, 2 of 12): counted, not mostly.
	if a.Items != 12 || len(a.Unparsed.Mostly) != 0 || strings.Contains(strings.Join(a.Warnings, "\n"), "mostly unparsed") {
		t.Errorf("items %d, warnings %q, mostly unparsed %v", a.Items, a.Warnings, a.Unparsed.Mostly)
	}
	for c, acc := range a.Accuracy {
		if acc == 0 {
			t.Errorf("config %s: accuracy 0 (unparsed share %.0f%%)", c, a.Unparsed.Share[c])
		}
	}

	run2 := filepath.Join(dir, "RUN2")
	if rc, _, e := askCLI("sweep", "--grid", "../../examples/sweep-grid.yaml", "--items", "../../examples/items.jsonl", "--runtime", spec, "--out", run2, "--template", "mlvu"); rc != 0 {
		t.Fatalf("sweep --template mlvu: rc %d: %s", rc, e)
	}
	a = auditJSON(t, run2)
	if a.Unparsed.Count != len(recs) || len(a.Unparsed.Mostly) != len(a.Accuracy) {
		t.Fatalf("unparsed %d of %d, mostly %v", a.Unparsed.Count, len(recs), a.Unparsed.Mostly)
	}
	if len(a.Warnings) == 0 || !strings.Contains(a.Warnings[0], "answers mostly unparsed: every config (9) 100%") {
		t.Errorf("warnings %q", a.Warnings)
	}
	if rc, _, e := askCLI("cascade", run2, "--json"); rc != 0 || !strings.Contains(e, "warning: the confidence cascade is computed over unparsed answers") {
		t.Errorf("cascade: rc %d, stderr %q", rc, e)
	}
	rc, out, e := askCLI("audit", run2)
	if rc != 0 || !strings.HasPrefix(out, "warning: answers mostly unparsed") || !strings.Contains(out, "(12 unparsed, 100%; – over parsed)") {
		t.Errorf("audit: rc %d, stdout %q, stderr %q", rc, out, e)
	}
}

// auditJSON runs `framesweep audit --json` on one input and decodes what the unparsed tests read.
func auditJSON(t *testing.T, in string) auditUnparsed {
	t.Helper()
	rc, out, e := askCLI("audit", in, "--json", "--resamples", "0")
	if rc != 0 {
		t.Fatalf("audit %s: rc %d: %s", in, rc, e)
	}
	var a auditUnparsed
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	return a
}
