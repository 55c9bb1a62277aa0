package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// vtLines are the visual_tokens objects of a records file's lines, by item|config (raw JSON).
func vtLines(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r struct {
			ItemID, Config string
			VisualTokens   json.RawMessage `json:"visual_tokens"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out[r.ItemID+"|"+r.Config] = string(r.VisualTokens)
	}
	return out
}

// TestSweepVisualTokensExport: `sweep --strict-tokens` in process (the tiny llama pair: 4 tokens a
// frame) records every visual pair's counts, equal, and no error; `audit --export` carries each
// record's visual_tokens into the release unchanged, and `audit` of the release reads them back: every
// visual config checked, none warned about.
func TestSweepVisualTokensExport(t *testing.T) {
	t.Parallel()
	spec := swModel(t)
	dir := t.TempDir()
	run, exp := filepath.Join(dir, "RUN"), filepath.Join(dir, "release")
	if rc, _, e := askCLI(append(swArgs(spec, run), "--limit", "3", "--strict-tokens")...); rc != 0 {
		t.Fatalf("sweep --strict-tokens: rc %d: %s", rc, e)
	}
	got := vtLines(t, filepath.Join(run, "records.jsonl"))
	for k, raw := range got {
		if raw == "" {
			continue // text-only
		}
		var v struct {
			Expected, Seen *int
			How, Family    string
		}
		if err := json.Unmarshal([]byte(raw), &v); err != nil || v.Expected == nil || v.Seen == nil || *v.Expected != *v.Seen || v.How != "runtime" || v.Family != "llava" || *v.Seen%4 != 0 {
			t.Errorf("%s: visual_tokens %s (%v)", k, raw, err)
		}
	}
	if rc, _, e := runAuditCLI("audit", run, "--resamples", "0", "--export", exp); rc != exitOK {
		t.Fatalf("audit --export: %s", e)
	}
	if again := vtLines(t, filepath.Join(exp, "records.jsonl")); len(again) != len(got) {
		t.Fatalf("%d records exported of %d", len(again), len(got))
	} else {
		for k, raw := range got {
			if again[k] != raw {
				t.Errorf("%s: visual_tokens %s exported as %s", k, raw, again[k])
			}
		}
	}
	rc, out, e := runAuditCLI("audit", exp, "--json")
	if rc != exitOK {
		t.Fatalf("audit of the release: %s", e)
	}
	var a struct {
		VisualTokens []struct {
			Config           string
			Checked, Outside int
			Median           float64 `json:"median_ratio"`
		} `json:"visual_tokens"`
		Warnings []string
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.VisualTokens) != 8 {
		t.Fatalf("checks of %d configs, want the 8 visual ones: %+v", len(a.VisualTokens), a.VisualTokens)
	}
	for _, c := range a.VisualTokens {
		if c.Checked == 0 || c.Outside != 0 || c.Median != 1 {
			t.Errorf("%+v", c)
		}
	}
	for _, w := range a.Warnings {
		if bytes.Contains([]byte(w), []byte("visual tokens")) {
			t.Errorf("warning %q", w)
		}
	}
}
