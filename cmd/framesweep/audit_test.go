package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
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
	rc, out, errs := runAuditCLI("audit", demoRecordsPath(t), "--json", "--html", html, "--md", md, "--resamples", "100", "--bootstrap-seed", "7")
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
		"pipeline_flips", "letter_prior", "bootstrap", "accuracy_harness"} {
		if _, ok := got[k]; !ok {
			t.Errorf("audit --json lacks %q", k)
		}
	}
	var pairs []map[string]any
	testenv.DecodeJSON(t, got["pairs"], &pairs)
	for _, k := range []string{"from", "to", "rescued", "harmed", "churn", "net", "state_change_rate", "mcnemar_p"} {
		if _, ok := pairs[0][k]; !ok {
			t.Errorf("pairs lack %q", k)
		}
	}
	var cfgs []map[string]any
	testenv.DecodeJSON(t, got["configs"], &cfgs)
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

// TestCascadeUnknownBudget: a ladder the records do not hold is a handled error naming the budget
// (the usage errors of audit and cascade are in TestUsageErrors).
func TestCascadeUnknownBudget(t *testing.T) {
	rc, _, errs := runAuditCLI("cascade", demoRecordsPath(t), "--cascade", "8,24")
	if rc != exitError || !strings.Contains(errs, "24 frames") && !strings.Contains(errs, "budgets") {
		t.Errorf("unknown budget: rc %d %q", rc, errs)
	}
}

// Budgets that exist but share no item: a handled error naming the file and why, not an empty cascade.
func TestCascadeCLINoCommonItems(t *testing.T) {
	p := filepath.Join(t.TempDir(), "disjoint.jsonl")
	os.WriteFile(p, []byte(`{"item_id":"a","config":"f8","correct":true,"confidence":0.5,"config_meta":{"frames":8}}`+"\n"+
		`{"item_id":"b","config":"f16","correct":true,"confidence":0.5,"config_meta":{"frames":16}}`+"\n"), 0o644)
	rc, out, errs := runAuditCLI("cascade", p, "--cascade", "8,16")
	if rc != exitError || out != "" || !strings.Contains(errs, "disjoint.jsonl") || !strings.Contains(errs, "no item has a record in every budget") {
		t.Errorf("rc %d out %q err %q", rc, out, errs)
	}
}

func TestCascadeCLI(t *testing.T) {
	rc, out, errs := runAuditCLI("cascade", demoRecordsPath(t), "--cascade", "16,32,64,128", "--folds", "4", "--json")
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
	rc, out, errs := runAuditCLI("ingest", "lmms-eval", p, "--config", "f16", "--frames", "16", "--size", "448x448")
	if rc != exitOK {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	// MLVU's M-avg over its 7 task types with one "count" item, wrong: 0.
	want := `{"item_id":"mlvu_dev:3","config":"f16","correct":false,"prediction":"C","answer":"A","category":"count","question_id":"q","task":"mlvu_dev","config_meta":{"frames":16,"width":448,"height":448},` +
		`"harness":{"metric":"lmms-eval mlvu_dev mlvu_percetion_score (M-avg over 7 task types)","kind":"macro","value":0,"counted":1}}` + "\n"
	if out != want {
		t.Errorf("import output\n%s\nwant\n%s", out, want)
	}
	tsv := filepath.Join(dir, "m_Video-MME.tsv")
	os.WriteFile(tsv, []byte("index\tquestion\tanswer\tprediction\n1\tq\tB\tB\n"), 0o644)
	// A prediction file carries no verdict of VLMEvalKit's: refused without --rescore text.
	rc, _, errs = runAuditCLI("ingest", "vlmevalkit", tsv, "--config", "text", "--text-only")
	if rc != exitError || !strings.Contains(errs, `no "score" column`) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("prediction file: rc %d %q", rc, errs)
	}
	rc, out, errs = runAuditCLI("ingest", "vlmevalkit", tsv, "--config", "text", "--text-only", "--rescore", "text")
	if rc != exitOK || !strings.Contains(out, `"correct":true`) || !strings.Contains(out, `"text_only":true`) || !strings.Contains(errs, "scored 1 records that carry no harness verdict") {
		t.Errorf("vlmevalkit --rescore text: rc %d %s %s", rc, out, errs)
	}
	os.WriteFile(tsv, []byte("index\tquestion\tanswer\tprediction\tcandidates\n1\tq\tB\tB\t__import__('os')\n"), 0o644)
	rc, _, errs = runAuditCLI("ingest", "vlmevalkit", tsv, "--config", "text", "--rescore", "text")
	if rc != exitError || !strings.Contains(errs, "m_Video-MME.tsv:2") {
		t.Errorf("hostile candidates: rc %d %q", rc, errs)
	}
}

func importFixture(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "ingest", "testdata", "lmms-eval", name)
}

// The import says which harness number it reproduced and whether the run's results.json agrees; a
// results file that disagrees is a warning; the audit then shows the harness's number per config.
func TestImportHarnessCLI(t *testing.T) {
	lvb := importFixture("2025-03-01T10-00-00_samples_longvideobench_val_v.jsonl")
	rc, out32, errs := runAuditCLI("ingest", "lmms-eval", lvb, "--config", "f32", "--frames", "32")
	if rc != exitOK || !strings.Contains(errs, "harness aggregate lmms-eval longvideobench_val_v lvb_acc = 0.6 (60.00 points") ||
		!strings.Contains(errs, "2025-03-01T10-00-00_results.json agrees: longvideobench_val_v lvb_acc,none = 0.6") {
		t.Fatalf("rc %d %s", rc, errs)
	}
	// The same samples beside a results.json of another run: a warning naming both numbers.
	dir := t.TempDir()
	data, _ := os.ReadFile(lvb)
	p := filepath.Join(dir, "2025-03-01T10-00-00_samples_longvideobench_val_v.jsonl")
	os.WriteFile(p, data, 0o644)
	os.WriteFile(filepath.Join(dir, "2025-03-01T10-00-00_results.json"), []byte(`{"results": {"longvideobench_val_v": {"lvb_acc,none": 0.53333}}}`), 0o644)
	rc, _, errs = runAuditCLI("ingest", "lmms-eval", p, "--config", "f32")
	if rc != exitOK || !strings.Contains(errs, "warning: ") || !strings.Contains(errs, "says longvideobench_val_v lvb_acc,none = 0.53333, the imported records give 0.6") {
		t.Errorf("mismatch: rc %d %s", rc, errs)
	}
	if rc, _, errs = runAuditCLI("ingest", "lmms-eval", p, "--config", "f32", "--no-check"); rc != exitOK || strings.Contains(errs, "warning") {
		t.Errorf("--no-check: rc %d %s", rc, errs)
	}
	// An unknown payload: exit 1, one line naming the file, the keys and the flags.
	rc, _, errs = runAuditCLI("ingest", "lmms-eval", importFixture("2025-03-13T08-00-00_samples_mytask.jsonl"), "--config", "x")
	if rc != exitError || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "mytask.jsonl:1") || !strings.Contains(errs, "--correct-from my_metric.hit") {
		t.Errorf("unknown payload: rc %d %q", rc, errs)
	}
	rc, _, errs = runAuditCLI("ingest", "lmms-eval", importFixture("2025-03-13T08-00-00_samples_mytask.jsonl"), "--config", "x", "--correct-from", "my_metric.hit")
	if rc != exitOK || !strings.Contains(errs, "agrees: mytask my_metric,none = 50.0, the micro accuracy of the mapped verdicts") {
		t.Errorf("--correct-from: rc %d %s", rc, errs)
	}
	// MLVU twice: the harness's M-avg beside the item-level accuracy; --rescore text says what it changed.
	mlvu := importFixture("2025-03-02T09-30-00_samples_mlvu_dev.jsonl")
	_, m32, _ := runAuditCLI("ingest", "lmms-eval", mlvu, "--config", "f32", "--frames", "32")
	rc, m64, errs := runAuditCLI("ingest", "lmms-eval", mlvu, "--config", "f64", "--frames", "64", "--rescore", "text")
	if rc != exitOK || !strings.Contains(errs, "--rescore text changed 1 of 22 harness verdicts (1 now correct, 0 now wrong)") {
		t.Fatalf("rescore: rc %d %s", rc, errs)
	}
	a, b := filepath.Join(dir, "m32.jsonl"), filepath.Join(dir, "m64.jsonl")
	os.WriteFile(a, []byte(m32), 0o644)
	os.WriteFile(b, []byte(m64), 0o644)
	md := filepath.Join(dir, "r.md")
	rc, out, errs := runAuditCLI("audit", a, b, "--json", "--resamples", "0", "--md", md)
	if rc != exitOK {
		t.Fatalf("audit: rc %d %s", rc, errs)
	}
	var res struct {
		Accuracy        map[string]float64 `json:"accuracy"`
		AccuracyHarness map[string]struct {
			Metric    string   `json:"metric"`
			Value     *float64 `json:"value"`
			ItemLevel *float64 `json:"item_level"`
			Rescored  int      `json:"rescored"`
			Complete  bool     `json:"complete"`
		} `json:"accuracy_harness"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	h32, h64 := res.AccuracyHarness["f32"], res.AccuracyHarness["f64"]
	if h32.Metric != "lmms-eval mlvu_dev mlvu_percetion_score (M-avg over 7 task types)" || *h32.Value != 58.333333333333336 || *h32.ItemLevel != 100*12.0/22 ||
		res.Accuracy["f32"] != 100*12.0/22 || *h64.Value != *h32.Value || *h64.ItemLevel != 100*13.0/22 || h64.Rescored != 1 || !h64.Complete {
		t.Errorf("accuracy_harness %+v %+v, accuracy %v", h32, h64, res.Accuracy)
	}
	rep, _ := os.ReadFile(md)
	if !strings.Contains(string(rep), `| f32 | lmms-eval mlvu\_dev mlvu\_percetion\_score (M-avg over 7 task types) | 58.33 | 22 | 0 | 54.55 | 54.55 | 0 |`) {
		t.Errorf("markdown lacks the harness row:\n%s", rep)
	}
	rc, txt, _ := runAuditCLI("audit", a, b, "--resamples", "0")
	if rc != exitOK || !strings.Contains(txt, "harness f64: lmms-eval mlvu_dev mlvu_percetion_score (M-avg over 7 task types) = 58.33 (item level 59.09 over the same 22 records, 1 rescored)") {
		t.Errorf("summary: %s", txt)
	}
	_ = out32
}

// VLMEvalKit: the frame budget comes from the file name when --frames is absent; the rating beside the
// _score file is checked.
func TestImportVLMEvalKitCLI(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "Qwen2-VL_Video-MME_16frame_score.tsv")
	os.WriteFile(p, []byte("index\tduration\tanswer\tprediction\tscore\n0\tshort\tA\tA\t1\n1\tshort\tB\tFailed to obtain answer via API.\t-1\n2\tlong\tC\tD\t0\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "Qwen2-VL_Video-MME_16frame_rating.json"), []byte(`{"overall": {"overall": "0.50"}}`), 0o644)
	rc, out, errs := runAuditCLI("ingest", "vlmevalkit", p, "--config", "f16")
	if rc != exitOK || !strings.Contains(out, `"config_meta":{"frames":16}`) || !strings.Contains(errs, "frames 16 from the file name") ||
		!strings.Contains(errs, "leaves out 1 of 3 rows") || !strings.Contains(errs, "agrees: overall 0.50") || !strings.Contains(out, `"skip":true`) {
		t.Errorf("rc %d\n%s\n%s", rc, out, errs)
	}
	rc, out, _ = runAuditCLI("ingest", "vlmevalkit", p, "--config", "f16", "--frames", "8")
	if rc != exitOK || !strings.Contains(out, `"frames":8`) {
		t.Errorf("--frames wins: %s", out)
	}
	// Without --config the budget is the config, and the split is the dataset without it.
	rc, out, errs = runAuditCLI("ingest", "vlmevalkit", p)
	if rc != exitOK || !strings.Contains(out, `"config":"16frame"`) || !strings.Contains(out, `"task":"Video-MME"`) || !strings.Contains(errs, "config 16frame from the file name") {
		t.Errorf("default config: rc %d\n%s\n%s", rc, out, errs)
	}
	// A CSV (VLMEvalKit's EVAL_FORMAT=csv, pandas' to_csv) is read as CSV.
	c := filepath.Join(dir, "Qwen2-VL_Video-MME_16frame_score.csv")
	os.WriteFile(c, []byte("index,prediction,answer,score\n0,A,A,1\n1,B,A,0\n"), 0o644)
	if rc, out, errs = runAuditCLI("ingest", "vlmevalkit", c, "--no-check"); rc != exitOK || strings.Count(out, "\n") != 2 {
		t.Errorf("csv: rc %d\n%s\n%s", rc, out, errs)
	}
}

// TestImportFramesValidated: the budget and size flags are checked, not stored as given: an explicit
// --frames -1 once dropped the budget (it is the "not given" default) and 10^12 frames was recorded.
func TestImportFramesValidated(t *testing.T) {
	p := filepath.Join(t.TempDir(), "2025-01-01T00-00-00_samples_mlvu_dev.jsonl")
	os.WriteFile(p, []byte(`{"doc_id": 3, "target": "A", "filtered_resps": "C", "mlvu_percetion_score": {"question_id": "q", "task_type": "count", "pred_answer": "C", "answer": "A"}}`+"\n"), 0o644)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--frames", "-1"}, `invalid value "-1" for flag -frames: out of range (want 0..131072)`},
		{[]string{"--frames", "1000000000000"}, `invalid value "1000000000000" for flag -frames: out of range (want 0..131072)`},
		{[]string{"--frames", "0"}, "--text-only for none"},
		{[]string{"--frames", "8", "--text-only"}, "--text-only with --frames 8"},
		{[]string{"--size", "448"}, `--size "448": want WxH with each side 1..65536`},
		{[]string{"--size", "0x448"}, `--size "0x448": want WxH`},
		{[]string{"--size", "448x100000"}, `--size "448x100000": want WxH`},
		{[]string{"--frames", "8.5"}, `invalid value "8.5" for flag -frames`},
		{[]string{"--max-pixels", "0"}, `flag -max-pixels: out of range (want 1..4294967296)`},
		{[]string{"--max-pixels", "100", "--text-only"}, "--max-pixels with --text-only"},
	} {
		rc, out, errs := runAuditCLI(append([]string{"ingest", "lmms-eval", p, "--config", "c"}, c.args...)...)
		if rc != exitUsage || out != "" || !strings.Contains(errs, c.msg) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: rc %d out %q stderr %q, want exit 2 and one line with %q", c.args, rc, out, errs, c.msg)
		}
	}
	for _, c := range []struct {
		args []string
		meta string
	}{
		{[]string{"--frames", "131072"}, `"config_meta":{"frames":131072}`},
		{[]string{"--text-only", "--frames", "0"}, `"config_meta":{"frames":0,"text_only":true}`},
		{[]string{"--text-only"}, `"config_meta":{"text_only":true}`},
		{[]string{"--frames", "16", "--max-pixels", "200704"}, `"config_meta":{"frames":16,"max_pixels":200704}`},
		{[]string{"--frames", "16", "--size", "448x252"}, `"config_meta":{"frames":16,"width":448,"height":252}`},
	} {
		rc, out, errs := runAuditCLI(append([]string{"ingest", "lmms-eval", p, "--config", "c"}, c.args...)...)
		if rc != exitOK || !strings.Contains(out, c.meta) {
			t.Errorf("%v: rc %d %s %s, want %s", c.args, rc, out, errs, c.meta)
		}
	}
}

// TestAuditBOM: `audit` of a records file saved with a UTF-8 byte order mark gives the same JSON as
// without it (it once failed on the mark), and import reads a harness log that carries one.
func TestAuditBOM(t *testing.T) {
	data, err := os.ReadFile(demoRecordsPath(t))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "bom.jsonl")
	os.WriteFile(p, append([]byte("\xef\xbb\xbf"), data...), 0o644)
	rc, withBOM, errs := runAuditCLI("audit", p, "--json", "--resamples", "10")
	if rc != exitOK {
		t.Fatalf("audit of a file with a BOM: rc %d: %s", rc, errs)
	}
	_, plain, _ := runAuditCLI("audit", demoRecordsPath(t), "--json", "--resamples", "10")
	if withBOM != plain {
		t.Error("a BOM changed the audit")
	}
	log := filepath.Join(t.TempDir(), "2025-01-01T00-00-00_samples_mlvu_dev.jsonl")
	os.WriteFile(log, []byte("\xef\xbb\xbf"+`{"doc_id": 3, "target": "A", "filtered_resps": "C", "mlvu_percetion_score": {"question_id": "q", "task_type": "count", "pred_answer": "C", "answer": "A"}}`+"\n"), 0o644)
	if rc, out, errs := runAuditCLI("ingest", "lmms-eval", log, "--config", "f16"); rc != exitOK || !strings.Contains(out, `"item_id":"mlvu_dev:3"`) {
		t.Errorf("import of a log with a BOM: rc %d %s %s", rc, out, errs)
	}
}
