package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/record"
)

// studyDir is testdata/study: a fixture in the study's released per-item format, of our own making
// (make_fixture.py), and the METRICS.md oracle of its per-model, per-split table (metrics_oracle.py).
func studyDir(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "study")
}

// importRecords runs `framesweep import ARGS…` and reads its records back.
func importRecords(t *testing.T, args ...string) ([]record.Record, string) {
	t.Helper()
	rc, out, errs := runAuditCLI(append([]string{"ingest"}, args...)...)
	if rc != exitOK {
		t.Fatalf("import %v: rc %d: %s", args, rc, errs)
	}
	recs, err := record.Read(strings.NewReader(out), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	return recs, errs
}

// TestImportStudyRelease (issue 39): the study's release as a researcher downloads it. per_item.csv
// imports with `import table FILE` and no flag; each wide table (no gold letters) imports with the
// answers-only items file, its split (--task) and model, and every config carries its frames; the
// verdicts of both are the same. The remedies the import suggests can be applied: --config-meta on a
// wide table (where --frames is refused, naming --config-meta).
func TestImportStudyRelease(t *testing.T) {
	dir := studyDir(t)
	long, errs := importRecords(t, "table", filepath.Join(dir, "labels", "per_item.csv"))
	if len(long) != 2308 || strings.Contains(errs, "no frame budget") || strings.Contains(errs, "correct column is not") {
		t.Fatalf("%d records; %s", len(long), errs)
	}
	type key struct{ model, task, item, config string }
	verdicts := map[key]bool{}
	for _, r := range long {
		verdicts[key{r.Model, r.Task, r.ItemID, r.Config}] = *r.Correct
		if r.Origin == nil || r.Origin.SourceTag == "" {
			t.Fatalf("%s %s: no origin", r.ItemID, r.Task)
		}
	}
	items := filepath.Join(dir, "items_answers.jsonl")
	wides, _ := filepath.Glob(filepath.Join(dir, "labels", "aggregated", "*_predictions_wide.csv"))
	if len(wides) != 16 {
		t.Fatalf("%d wide tables", len(wides))
	}
	seen := 0
	for _, w := range wides {
		model, split, _ := strings.Cut(strings.TrimSuffix(filepath.Base(w), "_predictions_wide.csv"), "_")
		recs, errs := importRecords(t, "table", w, "--wide", "--items", items, "--task", split, "--model", model, "--empty", "missing")
		if !strings.Contains(errs, `16f_151k {"frames":16,"max_pixels":151000}`) || strings.Contains(errs, "no frame budget") {
			t.Errorf("%s: notes %s", w, errs)
		}
		for _, r := range recs {
			m := r.ConfigMeta
			if m == nil || m.Frames == nil || (r.Config == "textonly") != (m.TextOnly != nil && *m.TextOnly) {
				t.Fatalf("%s %s: config_meta %+v", w, r.Config, m)
			}
			want, ok := verdicts[key{model, split, r.ItemID, r.Config}]
			if !ok || want != *r.Correct || r.Task != split || r.Model != model {
				t.Fatalf("%s: %s %s correct %v, per_item.csv %v (%v)", w, r.ItemID, r.Config, *r.Correct, want, ok)
			}
			seen++
		}
	}
	if seen != len(long) {
		t.Errorf("the wide tables hold %d answers, per_item.csv %d", seen, len(long))
	}
	w := filepath.Join(dir, "labels", "aggregated", "qwen2.5-vl-7b_V1_short_predictions_wide.csv")
	// Ids shared by splits need the table's split; the error says how to give it.
	if rc, _, errs := runAuditCLI("ingest", "table", w, "--wide", "--items", items); rc != exitError || !strings.Contains(errs, "tasks of the items file (V1_short, V2_medium): name the row's task with a task (split) column or --task") {
		t.Errorf("no --task: rc %d %s", rc, errs)
	}
	if rc, _, errs := runAuditCLI("ingest", "table", w, "--wide", "--items", items, "--task", "V1_short", "--frames", "16"); rc != exitUsage || !strings.Contains(errs, "--config-meta CONFIG=frames:N") {
		t.Errorf("--frames with --wide: rc %d %s", rc, errs)
	}
	metaFile := filepath.Join(t.TempDir(), "budgets.csv")
	os.WriteFile(metaFile, []byte("config,frames,max_pixels\n32f_151k,32,151200\n64f_76k,64,75600\n"), 0o644)
	recs, _ := importRecords(t, "table", w, "--wide", "--items", items, "--task", "V1_short",
		"--config-meta", "16f_151k=frames:16,max_pixels:151200", "--config-meta-file", metaFile)
	for _, r := range recs {
		if m := r.ConfigMeta; (r.Config == "16f_151k" || r.Config == "32f_151k") && *m.MaxPixels != 151200 || r.Config == "64f_76k" && *m.MaxPixels != 75600 {
			t.Fatalf("--config-meta: %s %+v", r.Config, m)
		}
	}
	for _, args := range [][]string{
		{"--config-meta", "16f_151k=frames:16,max_pixels:0"},
		{"--config-meta", "16f_151k=frames:16", "--config-meta", "16f_151k=frames:32"},
		{"--config-meta", "32f_151k=frames:32", "--config-meta-file", metaFile},
	} {
		if rc, _, errs := runAuditCLI(append([]string{"ingest", "table", w, "--wide", "--items", items, "--task", "V1_short"}, args...)...); rc != exitUsage || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: rc %d %q, want exit 2 and one line", args, rc, errs)
		}
	}
	if rc, _, errs := runAuditCLI("ingest", "lmms-eval", w, "--config", "x", "--config-meta", "a=frames:8"); rc != exitUsage || !strings.Contains(errs, "--config-meta is for ingest table") {
		t.Errorf("--config-meta for lmms-eval: rc %d %s", rc, errs)
	}
}

// TestStudyFixtureMatchesOracle (issue 39's acceptance, the part this side can check now): the fixture
// is what make_fixture.py makes, and for every model and split, the audit of the records that
// `import table per_item.csv` gives (filtered to that model and split) equals metrics_oracle.py's
// table (a Python implementation of METRICS.md that reads the CSV itself) to 0.01 points: items, best
// fixed, oracle, headroom, visual confusion, text overwrite.
func TestStudyFixtureMatchesOracle(t *testing.T) {
	py := testenv.NeedPython(t)
	dir := studyDir(t)
	tmp := t.TempDir()
	if out, err := exec.Command(py, filepath.Join(dir, "make_fixture.py"), tmp).CombinedOutput(); err != nil {
		t.Fatalf("make_fixture.py: %v %s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(tmp, "labels", "aggregated", "*.csv"))
	files = append(files, filepath.Join(tmp, "labels", "per_item.csv"), filepath.Join(tmp, "items_answers.jsonl"))
	for _, f := range files {
		rel, _ := filepath.Rel(tmp, f)
		a, _ := os.ReadFile(f)
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s: the committed fixture is not make_fixture.py's (rerun it): %v", rel, err)
		}
	}
	perItem := filepath.Join(dir, "labels", "per_item.csv")
	out, err := exec.Command(py, filepath.Join(dir, "metrics_oracle.py"), perItem).Output()
	if err != nil {
		t.Fatalf("metrics_oracle.py: %v", err)
	}
	var oracle struct {
		Tables []map[string]any `json:"tables"`
	}
	if err := json.Unmarshal(out, &oracle); err != nil || len(oracle.Tables) != 16 {
		t.Fatalf("oracle: %v, %d tables", err, len(oracle.Tables))
	}
	// The release as published: one file, four splits sharing ids, several models, imported with no
	// flags; each (model, split) audited out of the pool with --model and --task.
	rc, pooled, errs := runAuditCLI("ingest", "table", perItem)
	if rc != exitOK {
		t.Fatalf("import table %s: rc %d: %s", perItem, rc, errs)
	}
	pool := filepath.Join(tmp, "pooled.jsonl")
	if err := os.WriteFile(pool, []byte(pooled), 0o644); err != nil {
		t.Fatal(err)
	}
	splits := map[string]bool{}
	for _, want := range oracle.Tables {
		model, split := want["model"].(string), want["split"].(string)
		splits[split] = true
		rc, got, errs := runAuditCLI("audit", pool, "--model", model, "--task", split, "--json", "--resamples", "0")
		if rc != exitOK {
			t.Fatalf("audit --model %s --task %s: rc %d %s", model, split, rc, errs)
		}
		var a map[string]any
		if err := json.Unmarshal([]byte(got), &a); err != nil {
			t.Fatalf("audit --model %s --task %s: %v", model, split, err)
		}
		for _, k := range []string{"items", "best_fixed", "oracle_accuracy", "oracle_headroom", "visual_confusion_rate", "text_overwrite_rate"} {
			g, gok := a[k].(float64)
			w, wok := want[k].(float64)
			if !gok || !wok || math.Abs(g-w) > 0.01 {
				t.Errorf("%s %s: %s = %v, the oracle's %v", model, split, k, a[k], want[k])
			}
		}
	}
	// The pooled audit of every split and model: the table has rows for every split.
	rc, got, errs := runAuditCLI("audit", pool, "--json", "--resamples", "0")
	if rc != exitOK {
		t.Fatalf("pooled audit: rc %d %s", rc, errs)
	}
	var all struct {
		Table []struct {
			Split string `json:"split"`
		} `json:"table"`
	}
	if err := json.Unmarshal([]byte(got), &all); err != nil {
		t.Fatalf("pooled audit: %v", err)
	}
	rows := map[string]bool{}
	for _, r := range all.Table {
		rows[r.Split] = true
	}
	for s := range splits {
		if !rows[s] {
			t.Errorf("the pooled audit's table has no row for split %s (rows: %v)", s, rows)
		}
	}
}

// TestImportDurationBinsNames (issue 40): --duration-bins group names are non-empty and distinct, a
// usage error before any row is read (a:10,a:20,a once made two groups of one name).
func TestImportDurationBinsNames(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.csv")
	os.WriteFile(p, []byte("sample_id,config,correct,duration\nq,f8,1,30\n"), 0o644)
	for _, bins := range []string{"a:10,a:20,a", "a:10,b:20,a", ":10,b"} {
		if rc, out, errs := runAuditCLI("ingest", "table", p, "--duration-bins", bins); rc != exitUsage || out != "" || !strings.Contains(errs, "--duration-bins") {
			t.Errorf("--duration-bins %s: rc %d %q", bins, rc, errs)
		}
	}
	if rc, _, errs := runAuditCLI("ingest", "table", p, "--duration-bins", "a:10,b:20,c"); rc != exitOK {
		t.Errorf("distinct names: rc %d %s", rc, errs)
	}
}
