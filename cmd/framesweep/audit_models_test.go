package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// writeModelRecords writes one records file per model: text, f16, f32 (and f64 for all but the
// last model) over 20 items, verdicts from the item and config; unnamed writes no model field.
func writeModelRecords(t *testing.T, models []string, unnamed bool) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for mi, m := range models {
		var b strings.Builder
		for i := 0; i < 20; i++ {
			for _, f := range []int{0, 16, 32, 64} {
				if f == 64 && mi == len(models)-1 {
					continue
				}
				ok := (i*7+f/16*3+mi*5)%4 != 0
				model := fmt.Sprintf(`,"model":%q`, m)
				if unnamed {
					model = ""
				}
				fmt.Fprintf(&b, `{"item_id":"q%02d","config":"f%d","correct":%v,"task":"t%d","duration":"%s","config_meta":{"frames":%d}%s}`+"\n",
					i, f, ok, i%2, []string{"short", "long"}[i%3%2], f, model)
			}
		}
		p := filepath.Join(dir, m+".jsonl")
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestAuditModelsCLI: records of three models audit as one comparison (JSON keys, the matched grid with
// a --ceiling mark, the HTML and Markdown comparison sections, the text summary); --model audits one;
// unnamed records beside named ones, a bad or unknown --ceiling are refused.
func TestAuditModelsCLI(t *testing.T) {
	paths := writeModelRecords(t, []string{"alpha", "beta", "gamma"}, false)
	dir := t.TempDir()
	html, md := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.md")
	args := append([]string{"audit"}, paths...)
	rc, out, errs := runAuditCLI(append(args, "--json", "--ceiling", "beta=16", "--html", html, "--md", md, "--resamples", "50")...)
	if rc != exitOK {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"models", "model_info", "matched_grid", "per_model", "accuracy", "table", "churn", "cross_model", "notes"} {
		if _, ok := got[k]; !ok {
			t.Errorf("multi-model audit --json lacks %q", k)
		}
	}
	var mg struct {
		Configs     []string `json:"configs"`
		OverCeiling []struct {
			Model, Config, Source string
		} `json:"over_ceiling"`
	}
	testenv.DecodeJSON(t, got["matched_grid"], &mg)
	if strings.Join(mg.Configs, ",") != "f0,f16" || len(mg.OverCeiling) != 2 || mg.OverCeiling[0].Model != "beta" || mg.OverCeiling[0].Source != "ceiling" {
		t.Errorf("matched grid %+v", mg)
	}
	h, _ := os.ReadFile(html)
	m, _ := os.ReadFile(md)
	for _, want := range []string{"Matched grid", "The models side by side", "Cross-model structure", "Beyond the ceiling of beta"} {
		if !bytes.Contains(h, []byte(want)) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if !bytes.Contains(m, []byte("## Cross-model structure")) || !bytes.Contains(m, []byte("| alpha | t1 |")) {
		t.Errorf("Markdown lacks the comparison:\n%s", m)
	}
	rc, out, errs = runAuditCLI(append(args, "--resamples", "0")...)
	if rc != exitOK || !strings.Contains(out, "3 models, matched grid f0 f16 f32") || !strings.Contains(out, "left out: f64 (missing from gamma)") {
		t.Errorf("summary (rc %d): %s %s", rc, out, errs)
	}
	rc, out, _ = runAuditCLI(append(args, "--model", "beta", "--json", "--resamples", "0")...)
	if rc != exitOK || !strings.Contains(out, `"mc_configs"`) || strings.Contains(out, `"matched_grid"`) {
		t.Errorf("--model beta (rc %d): not one model's audit", rc)
	}
	rc, out, errs = runAuditCLI("audit", paths[0], "--ceiling", "alpha=16", "--json", "--resamples", "0")
	if rc != exitOK || !strings.Contains(out, `configs f32, f64 are beyond the 16-frame ceiling given for model \"alpha\"`) || strings.Contains(out, `"f64": `) {
		t.Errorf("one model with a ceiling (rc %d %s): %.300s", rc, errs, out)
	}
	unnamed := writeModelRecords(t, []string{"old"}, true)
	rc, _, errs = runAuditCLI("audit", paths[0], unnamed[0])
	if rc != exitError || !strings.Contains(errs, "old.jsonl") || !strings.Contains(errs, "--model") {
		t.Errorf("unnamed beside named: rc %d %s", rc, errs)
	}
	for _, c := range []struct {
		arg  string
		rc   int
		want string
	}{{"beta", exitUsage, "MODEL=FRAMES"}, {"beta=0", exitUsage, "FRAMES 0: out of range (want 1..131072)"}, {"zeta=8", exitError, "zeta"}} {
		rc, _, errs = runAuditCLI(append(args, "--ceiling", c.arg)...)
		if rc != c.rc || !strings.Contains(errs, c.want) {
			t.Errorf("--ceiling %s: rc %d %s", c.arg, rc, errs)
		}
	}
}

// TestAuditExportDemoRun: the README's sweep (the shared demo RUN: examples/items.jsonl ×
// examples/sweep-grid.yaml through the tiny llama model) exported by `audit RUN --export DIR` audits
// again to the same JSON from DIR; with a second model's RUN (the tiny InternVL model, the same sweep)
// and a ceiling, the multi-model export does too.
func TestAuditExportDemoRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two sweeps")
	}
	t.Parallel()
	_, llama := demoRun(t)
	runs := map[string]string{"llama": llama}
	rc, out, errs := askCLI("testmodel", "--out", t.TempDir(), "--arch", "internvl")
	if rc != exitOK {
		t.Fatalf("testmodel: %s", errs)
	}
	var tm struct{ Spec string }
	testenv.DecodeJSON(t, []byte(out), &tm)
	runs["internvl"] = filepath.Join(t.TempDir(), "run-internvl")
	if rc, _, errs := askCLI(swArgs(tm.Spec+",threads=1", runs["internvl"])...); rc != exitOK {
		t.Fatalf("sweep internvl: %s", errs)
	}
	roundTrip := func(name string, args ...string) map[string]json.RawMessage {
		t.Helper()
		exp := filepath.Join(t.TempDir(), name)
		rc, first, errs := runAuditCLI(append(append([]string{"audit"}, args...), "--export", exp, "--json")...)
		if rc != exitOK {
			t.Fatalf("%s: audit --export: %s", name, errs)
		}
		rc, again, errs := runAuditCLI("audit", exp, "--json")
		if rc != exitOK || again != first {
			t.Fatalf("%s: the audit of the export differs (rc %d %s)", name, rc, errs)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal([]byte(first), &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	one := roundTrip("one", runs["llama"], "--bootstrap-seed", "5")
	if !strings.Contains(string(one["bootstrap"]), `"seed": 5`) || !strings.Contains(string(one["items"]), "12") {
		t.Errorf("one model: bootstrap %s items %s", one["bootstrap"], one["items"])
	}
	two := roundTrip("two", runs["llama"], runs["internvl"], "--ceiling", "tiny-internvl=2")
	var models []string
	testenv.DecodeJSON(t, two["models"], &models)
	var mg struct {
		Configs     []string                         `json:"configs"`
		OverCeiling []struct{ Model, Config string } `json:"over_ceiling"`
		Items       int                              `json:"items"`
	}
	testenv.DecodeJSON(t, two["matched_grid"], &mg)
	if strings.Join(models, ",") != "tiny-llama,tiny-internvl" || len(mg.Configs) != 5 || mg.Configs[0] != "text-only" || len(mg.OverCeiling) != 4 || mg.Items != 12 {
		t.Errorf("two models %v, matched grid %+v", models, mg)
	}
	for _, c := range mg.Configs[1:] {
		if !strings.HasPrefix(c, "f2-") {
			t.Errorf("%s in the matched grid, beyond tiny-internvl's 2-frame ceiling", c)
		}
	}
}

// TestImportModelFlag: --model names every imported record; an empty or multi-line name is a usage
// error.
func TestImportModelFlag(t *testing.T) {
	src := filepath.Join("..", "..", "ingest", "testdata", "lmms-eval")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var file string
	for _, e := range ents {
		if strings.Contains(e.Name(), "samples_videomme") && strings.HasSuffix(e.Name(), ".jsonl") {
			file = filepath.Join(src, e.Name())
		}
	}
	if file == "" {
		t.Fatalf("no Video-MME samples file in %s", src)
	}
	rc, out, errs := runAuditCLI("ingest", "lmms-eval", file, "--config", "f16", "--frames", "16", "--model", "qwen2.5-vl-7b", "--no-check")
	if rc != exitOK {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if !strings.Contains(l, `"model":"qwen2.5-vl-7b"`) {
			t.Fatalf("record without the model: %s", l)
		}
	}
	for _, bad := range []string{"", "a\nb"} {
		if rc, _, errs := runAuditCLI("ingest", "lmms-eval", file, "--config", "f16", "--model", bad); rc != exitUsage || !strings.Contains(errs, "--model") {
			t.Errorf("--model %q: rc %d %s", bad, rc, errs)
		}
	}
}
