package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// importTo runs `framesweep import` and writes its records to dir/name.
func importTo(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	rc, out, errs := runAuditCLI(append([]string{"ingest"}, args...)...)
	if rc != exitOK {
		t.Fatalf("import %v: rc %d: %s", args, rc, errs)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAuditIDsThatNeverMeet: lmms-eval names Video-MME's items videomme:<doc_id>, VLMEvalKit by its
// index: audited together nothing pairs, and the audit exits 1 with one line naming both namespaces
// and the flags that map them; mapped by --item-prefix or --item-id question, and imported under one
// task name (an item is its task and its id: lmms-eval's task is "videomme", VLMEvalKit's dataset
// "Video-MME"), they pair; mapped ids under two task names are refused with one line naming --task.
func TestAuditIDsThatNeverMeet(t *testing.T) {
	dir := t.TempDir()
	lmms := importTo(t, dir, "f32.jsonl", "lmms-eval", importFixture("2025-03-03T08-00-00_samples_videomme.jsonl"), "--config", "f32", "--frames", "32")
	// The same six questions as VLMEvalKit's _score table (question_id column as its Video-MME TSV has).
	tsv := "index\tquestion_id\tduration\tanswer\tprediction\tscore\n"
	for i, q := range []string{"001-1", "001-2", "301-1", "301-2", "601-1", "601-2"} {
		tsv += strings.Join([]string{string(rune('0' + i)), q, "short", "A", "A", "1"}, "\t") + "\n"
	}
	vp := filepath.Join(dir, "Qwen2-VL_Video-MME_16frame_score.tsv")
	os.WriteFile(vp, []byte(tsv), 0o644)
	vlm := importTo(t, dir, "f16.jsonl", "vlmevalkit", vp, "--config", "f16", "--no-check")

	rc, out, errs := runAuditCLI("audit", lmms, vlm)
	line := strings.TrimSpace(errs)
	if rc != exitError || out != "" || strings.Contains(line, "\n") ||
		!strings.Contains(line, `config f32 (lmms-eval) ("videomme:" then a number, e.g. videomme:0, videomme:1)`) ||
		!strings.Contains(line, "config f16 (VLMEvalKit) (bare numbers, e.g. 0, 1) never meet") ||
		!strings.Contains(line, "--item-id question") || !strings.Contains(line, "--item-prefix videomme:") {
		t.Fatalf("rc %d, stdout %q, stderr %q", rc, out, errs)
	}
	mapped := importTo(t, dir, "f16-prefixed.jsonl", "vlmevalkit", vp, "--config", "f16", "--no-check", "--item-prefix", "videomme:")
	if rc, _, errs := runAuditCLI("audit", lmms, mapped); rc != exitError || !strings.Contains(errs, "their item ids meet") || !strings.Contains(errs, "import --task") {
		t.Errorf("mapped ids under two tasks: rc %d %s", rc, errs)
	}
	for _, flags := range [][]string{{"--item-prefix", "videomme:"}, {"--item-id", "question"}} {
		v := importTo(t, dir, "f16-mapped.jsonl", append([]string{"vlmevalkit", vp, "--config", "f16", "--no-check", "--task", "videomme"}, flags...)...)
		l := lmms
		if flags[0] == "--item-id" {
			l = importTo(t, dir, "f32-q.jsonl", "lmms-eval", importFixture("2025-03-03T08-00-00_samples_videomme.jsonl"), "--config", "f32", "--frames", "32", "--item-id", "question")
		}
		if rc, out, errs := runAuditCLI("audit", l, v); rc != exitOK || !strings.HasPrefix(out, "paired items: 6 (dropped 0)") {
			t.Errorf("%v: rc %d\n%s%s", flags, rc, out, errs)
		}
	}
	// Any field names items: lmms-eval's bare doc_id pairs with VLMEvalKit's index.
	l := importTo(t, dir, "f32-doc.jsonl", "lmms-eval", importFixture("2025-03-03T08-00-00_samples_videomme.jsonl"), "--config", "f32", "--frames", "32", "--item-id", "doc_id")
	vt := importTo(t, dir, "f16-task.jsonl", "vlmevalkit", vp, "--config", "f16", "--no-check", "--task", "videomme")
	if rc, out, errs := runAuditCLI("audit", l, vt); rc != exitOK || !strings.HasPrefix(out, "paired items: 6") {
		t.Errorf("--item-id doc_id: rc %d\n%s%s", rc, out, errs)
	}
	if rc, _, errs := runAuditCLI("ingest", "vlmevalkit", vp, "--config", "f16", "--item-id", "video"); rc != exitError || !strings.Contains(errs, `no "video" column`) {
		t.Errorf("--item-id of a missing column: rc %d %s", rc, errs)
	}
}

// TestAuditEmptyMatchedGrid: a model whose configs share nothing with the others empties the matched
// grid: exit 1 naming it and the --models that audits the rest; --models audits that subset.
func TestAuditEmptyMatchedGrid(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, m := range []struct{ model, config string }{{"qwen", "f8"}, {"qwen", "f16"}, {"intern", "f8"}, {"intern", "f16"}, {"llava", "f32"}} {
		files = append(files, importTo(t, dir, m.model+"-"+m.config+".jsonl", "lmms-eval", importFixture("2025-03-03T08-00-00_samples_videomme.jsonl"),
			"--config", m.config, "--model", m.model, "--no-check"))
	}
	rc, out, errs := runAuditCLI(append([]string{"audit"}, files...)...)
	if rc != exitError || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 ||
		!strings.Contains(errs, `model "llava" (configs f32) shares no config with the others`) || !strings.Contains(errs, "--models qwen,intern") {
		t.Fatalf("rc %d, stdout %q, stderr %q", rc, out, errs)
	}
	rc, out, errs = runAuditCLI(append([]string{"audit", "--models", "qwen,intern"}, files...)...)
	if rc != exitOK || !strings.HasPrefix(out, "2 models, matched grid f16 f8: 6 items") {
		t.Errorf("--models qwen,intern: rc %d\n%s%s", rc, out, errs)
	}
	if rc, out, _ = runAuditCLI(append([]string{"audit", "--models", "llava"}, files...)...); rc != exitOK || !strings.HasPrefix(out, "paired items: 6") {
		t.Errorf("--models llava: rc %d\n%s", rc, out)
	}
	if rc, _, errs = runAuditCLI(append([]string{"audit", "--models", "gpt"}, files...)...); rc != exitError || !strings.Contains(errs, `no record names model "gpt"`) {
		t.Errorf("--models gpt: rc %d %s", rc, errs)
	}
	if rc, _, _ = runAuditCLI(append([]string{"audit", "--models", "qwen", "--model", "intern"}, files...)...); rc != exitUsage {
		t.Errorf("--model with --models: rc %d, want %d", rc, exitUsage)
	}
	// Two models, same configs, ids in two namespaces: the line says which ids never meet.
	other := importTo(t, dir, "intern-q.jsonl", "lmms-eval", importFixture("2025-03-03T08-00-00_samples_videomme.jsonl"), "--config", "f8", "--model", "intern", "--item-id", "question", "--no-check")
	rc, _, errs = runAuditCLI("audit", files[0], other)
	if rc != exitError || !strings.Contains(errs, "shares config f8 with the others, but its item ids") || !strings.Contains(errs, "never meet") {
		t.Errorf("two namespaces: rc %d %s", rc, errs)
	}
}
