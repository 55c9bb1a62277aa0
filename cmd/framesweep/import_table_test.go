package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// tableOutcomes is one set of per-item outcomes, the source of every fixture of
// TestImportTablesMatchLmmsEval: 24 Video-MME questions, their task type, duration and gold letter,
// and the letter each of three budgets predicted ("" where the reply named no letter).
func tableOutcomes() (qids, cats, durs, gold []string, budgets []int, pred map[int][]string) {
	budgets = []int{8, 16, 32}
	pred = map[int][]string{}
	catList := []string{"Counting Problem", "OCR Problems", "Action Recognition"}
	durList := []string{"short", "medium", "long"}
	for i := 0; i < 24; i++ {
		qids = append(qids, fmt.Sprintf("%03d-%d", 1+i/3, 1+i%3))
		cats = append(cats, catList[i%3])
		durs = append(durs, durList[(i/4)%3])
		gold = append(gold, string(rune('A'+i%4)))
		for k, b := range budgets {
			// Deterministic churn: right at some budgets and wrong at others, a few replies unparsed.
			p := gold[i]
			switch (i*7 + k*5) % 6 {
			case 0, 3:
				p = string(rune('A' + (i+1+k)%4))
			case 5:
				if (i/6)%2 == 0 {
					p = ""
				}
			}
			pred[b] = append(pred[b], p)
		}
	}
	return
}

// TestImportTablesMatchLmmsEval: the same per-item outcomes as lmms-eval samples files (one per
// budget), as a long table (one row per item × config) and as a wide table (one column of letters per
// config, frames in the column names) import and audit to the same numbers: every key of `audit
// --json` but the harness's own aggregate and the notes about it.
func TestImportTablesMatchLmmsEval(t *testing.T) {
	qids, cats, durs, gold, budgets, pred := tableOutcomes()
	dir := t.TempDir()
	var lmmsFiles []string
	long := [][]string{{"sample_id", "config", "frames", "task", "task_type", "duration", "answer", "prediction", "correct"}}
	wide := [][]string{{"sample_id", "answer", "task_type", "duration"}}
	for _, b := range budgets {
		wide[0] = append(wide[0], fmt.Sprintf("f%d", b))
	}
	for i := range qids {
		wide = append(wide, []string{qids[i], gold[i], cats[i], durs[i]})
	}
	for _, b := range budgets {
		var lines []string
		cfg := fmt.Sprintf("f%d", b)
		for i, q := range qids {
			p, resp := pred[b][i], pred[b][i]
			if p == "" {
				resp = "I cannot tell from these frames."
			}
			score := 0.0
			if p == gold[i] {
				score = 1
			}
			line, _ := json.Marshal(map[string]any{"doc_id": i, "target": gold[i], "filtered_resps": []string{resp},
				"doc": map[string]any{"question_id": q, "duration": durs[i], "task_type": cats[i], "answer": gold[i]},
				"videomme_perception_score": map[string]any{"question_id": q, "duration": durs[i], "category": "Knowledge", "sub_category": "x",
					"task_category": cats[i], "pred_answer": p, "answer": gold[i], "score": score}})
			lines = append(lines, string(line))
			long = append(long, []string{q, cfg, fmt.Sprint(b), "videomme", cats[i], durs[i], gold[i], resp, fmt.Sprint(score == 1)})
			wide[1+i] = append(wide[1+i], p)
		}
		p := filepath.Join(dir, cfg, "2025-03-03T08-00-00_samples_videomme.jsonl")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		lmmsFiles = append(lmmsFiles, importTo(t, dir, cfg+".jsonl", "lmms-eval", p, "--config", cfg, "--frames", fmt.Sprint(b), "--item-id", "question", "--no-check"))
	}
	writeTable := func(name string, rows [][]string, sep string) string {
		var b strings.Builder
		for _, r := range rows {
			b.WriteString(strings.Join(r, sep) + "\n")
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(b.String()), 0o644)
		return p
	}
	longCSV := importTo(t, dir, "long.jsonl", "table", writeTable("long.csv", long, ","))
	wideTSV := importTo(t, dir, "wide.jsonl", "table", writeTable("wide.tsv", wide, "\t"), "--wide", "--task", "videomme")

	want := auditMap(t, lmmsFiles...)
	if want["items"].(float64) != 24 || want["unparsed"].(map[string]any)["count"].(float64) == 0 {
		t.Fatalf("the fixture holds no paired items or no unparsed answer: %v %v", want["items"], want["unparsed"])
	}
	for name, got := range map[string]map[string]any{"long": auditMap(t, longCSV), "wide": auditMap(t, wideTSV)} {
		for k := range want {
			if !reflect.DeepEqual(got[k], want[k]) {
				t.Errorf("%s table: %s = %v, lmms-eval logs give %v", name, k, got[k], want[k])
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s table: %d keys, lmms-eval %d", name, len(got), len(want))
		}
	}
}

// auditMap is `audit --json` of the inputs, less what only an imported harness log carries: its own
// aggregate (accuracy_harness) and the notes about it.
func auditMap(t *testing.T, in ...string) map[string]any {
	t.Helper()
	rc, out, errs := runAuditCLI(append([]string{"audit", "--json", "--resamples", "200"}, in...)...)
	if rc != exitOK {
		t.Fatalf("audit %v: rc %d: %s", in, rc, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "accuracy_harness")
	var notes []any
	for _, n := range m["notes"].([]any) {
		if !strings.Contains(n.(string), "harness") {
			notes = append(notes, n)
		}
	}
	m["notes"] = notes
	return m
}

// TestImportTableCLI: a table the importer cannot read exits 1 with one line naming the file and the
// way out; the table flags are refused for the other formats, the harness flags for tables.
func TestImportTableCLI(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "study.csv")
	os.WriteFile(p, []byte("sample_id,config,correct,colour\nq,f8,1,red\n"), 0o644)
	rc, out, errs := runAuditCLI("ingest", "table", p)
	if rc != exitError || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, p+":1") || !strings.Contains(errs, "--ignore COLUMN") {
		t.Errorf("unknown column: rc %d %q %q", rc, out, errs)
	}
	rc, out, errs = runAuditCLI("ingest", "table", p, "--ignore", "colour", "--model", "qwen")
	if rc != exitOK || !strings.Contains(out, `"model":"qwen"`) || !strings.Contains(errs, "1 records from") {
		t.Errorf("--ignore: rc %d %q %q", rc, out, errs)
	}
}
