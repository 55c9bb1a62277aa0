package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func runAuditCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	rc := dispatch(args, &out, &errb)
	return rc, out.String(), errb.String()
}

func demoRecordsPath(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", "records", "demo.jsonl")
}

// Every key of METRICS.md "Output" is present at the top level of `audit --json`.
func TestAuditJSONKeys(t *testing.T) {
	dir := t.TempDir()
	html, md := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.md")
	rc, out, errs := runAuditCLI("audit", demoRecordsPath(t), "--json", "--html", html, "--md", md, "--resamples", "100", "--seed", "7")
	if rc != exitOK {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"accuracy", "best_fixed", "oracle_accuracy", "oracle_headroom", "oracle_headroom_ci", "visual_confusion_rate",
		"visual_confusion_rate_ci", "visual_confusion_rate_visual_only", "terminal_regression_rate", "text_overwrite_rate",
		"text_overwrite_rate_of_text_correct", "text_overwrite_all_visual_rate", "unstable_rate", "pairs", "categories", "durations",
		"items", "dropped_items", "configs", "noise_floor", "open_ended", "cascade", "sampling_recovery_rate", "iso_compute",
		"pipeline_flips", "letter_prior", "bootstrap"} {
		if _, ok := got[k]; !ok {
			t.Errorf("audit --json lacks %q", k)
		}
	}
	var pairs []map[string]any
	_ = json.Unmarshal(got["pairs"], &pairs)
	for _, k := range []string{"from", "to", "rescued", "harmed", "churn", "net", "state_change_rate", "mcnemar_p"} {
		if _, ok := pairs[0][k]; !ok {
			t.Errorf("pairs lack %q", k)
		}
	}
	var cfgs []map[string]any
	_ = json.Unmarshal(got["configs"], &cfgs)
	for _, k := range []string{"id", "cost", "frames", "text_only"} {
		if _, ok := cfgs[0][k]; !ok {
			t.Errorf("configs lack %q", k)
		}
	}
	if !strings.Contains(string(got["bootstrap"]), `"seed": 7`) {
		t.Errorf("seed not recorded: %s", got["bootstrap"])
	}
	for _, p := range []string{html, md} {
		if st, err := os.Stat(p); err != nil || st.Size() < 1000 {
			t.Errorf("%s not written: %v", p, err)
		}
	}
	// A run directory works as well as a file.
	rc, out2, _ := runAuditCLI("audit", filepath.Dir(demoRecordsPath(t)), "--resamples", "0")
	if rc != exitOK || !strings.Contains(out2, "paired items: 100") {
		t.Errorf("directory input: rc %d %q", rc, out2)
	}
}

func TestAuditErrorsAndUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"item_id":"a","config":"x","correct":true}`+"\n"+`{"item_id":"a","config":"x"`+"\n"), 0o644)
	rc, _, errs := runAuditCLI("audit", bad)
	if rc != exitError || !strings.Contains(errs, "bad.jsonl:2") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("bad records: rc %d %q", rc, errs)
	}
	rc, _, errs = runAuditCLI("audit", filepath.Join(dir, "missing.jsonl"))
	if rc != exitError || !strings.Contains(errs, "missing.jsonl") {
		t.Errorf("missing file: rc %d %q", rc, errs)
	}
	for _, args := range [][]string{{"audit"}, {"audit", bad, "--budgets", "16,8"}, {"audit", bad, "--size", "10"}, {"cascade"}, {"import", "lmms-eval", bad},
		{"import", "foo", bad, "--config", "x"}, {"import", "vlmevalkit", bad, "--config", "x", "--width", "10"}} {
		if rc, _, _ := runAuditCLI(args...); rc != exitUsage {
			t.Errorf("%v: rc %d, want %d", args, rc, exitUsage)
		}
	}
	rc, _, errs = runAuditCLI("cascade", demoRecordsPath(t), "--budgets", "8,24")
	if rc != exitError || !strings.Contains(errs, "24 frames") && !strings.Contains(errs, "budgets") {
		t.Errorf("unknown budget: rc %d %q", rc, errs)
	}
}

// Budgets that exist but share no item: a handled error naming the file and why, not an empty cascade.
func TestCascadeCLINoCommonItems(t *testing.T) {
	p := filepath.Join(t.TempDir(), "disjoint.jsonl")
	os.WriteFile(p, []byte(`{"item_id":"a","config":"f8","correct":true,"confidence":0.5,"config_meta":{"frames":8}}`+"\n"+
		`{"item_id":"b","config":"f16","correct":true,"confidence":0.5,"config_meta":{"frames":16}}`+"\n"), 0o644)
	rc, out, errs := runAuditCLI("cascade", p, "--budgets", "8,16")
	if rc != exitError || out != "" || !strings.Contains(errs, "disjoint.jsonl") || !strings.Contains(errs, "no item has a record in every budget") {
		t.Errorf("rc %d out %q err %q", rc, out, errs)
	}
}

func TestCascadeCLI(t *testing.T) {
	rc, out, errs := runAuditCLI("cascade", demoRecordsPath(t), "--budgets", "16,32,64,128", "--folds", "4", "--json")
	if rc != exitOK {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	var c struct {
		Budgets []struct {
			Config string `json:"config"`
		} `json:"budgets"`
		Selected    *struct{ Accuracy float64 } `json:"selected"`
		FoldResults []any                       `json:"fold_results"`
		Reference   string                      `json:"reference"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Budgets) != 4 || c.Budgets[3].Config != "f128" || c.Reference != "f128" || len(c.FoldResults) != 4 || c.Selected == nil {
		t.Errorf("cascade: %s", out)
	}
}

func TestImportCLI(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "2025-01-01T00-00-00_samples_mlvu_dev.jsonl")
	os.WriteFile(p, []byte(`{"doc_id": 3, "target": "A", "filtered_resps": "C", "mlvu_percetion_score": {"question_id": "q", "task_type": "count", "pred_answer": "C", "answer": "A"}}`+"\n"), 0o644)
	rc, out, errs := runAuditCLI("import", "lmms-eval", p, "--config", "f16", "--frames", "16", "--width", "448", "--height", "448")
	if rc != exitOK {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	want := `{"item_id":"mlvu_dev:3","config":"f16","correct":false,"prediction":"C","answer":"A","category":"count","question_id":"q","task":"mlvu_dev","config_meta":{"frames":16,"width":448,"height":448}}` + "\n"
	if out != want {
		t.Errorf("import output\n%s\nwant\n%s", out, want)
	}
	tsv := filepath.Join(dir, "m_Video-MME.tsv")
	os.WriteFile(tsv, []byte("index\tquestion\tanswer\tprediction\n1\tq\tB\tB\n"), 0o644)
	rc, out, _ = runAuditCLI("import", "vlmevalkit", tsv, "--config", "text", "--text-only")
	if rc != exitOK || !strings.Contains(out, `"correct":true`) || !strings.Contains(out, `"text_only":true`) {
		t.Errorf("vlmevalkit: rc %d %s", rc, out)
	}
	os.WriteFile(tsv, []byte("index\tquestion\tanswer\tprediction\tcandidates\n1\tq\tB\tB\t__import__('os')\n"), 0o644)
	rc, _, errs = runAuditCLI("import", "vlmevalkit", tsv, "--config", "text")
	if rc != exitError || !strings.Contains(errs, "m_Video-MME.tsv:2") {
		t.Errorf("hostile candidates: rc %d %q", rc, errs)
	}
}
