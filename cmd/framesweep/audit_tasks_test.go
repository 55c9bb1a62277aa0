package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// studyRec is one record line of the fixtures below.
type studyRec struct {
	model, task, item, config string
	frames                    int   // -1: no config_meta (unknown cost)
	correct                   *bool // nil: an error record
	video                     string
}

func (r studyRec) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"item_id":%q,"config":%q,"model":%q`, r.item, r.config, r.model)
	if r.task != "" {
		fmt.Fprintf(&b, `,"task":%q`, r.task)
	}
	if r.correct == nil {
		b.WriteString(`,"status":"error","error":"8 frames requested from a 3-frame clip"`)
	} else {
		fmt.Fprintf(&b, `,"correct":%v`, *r.correct)
	}
	if r.frames >= 0 {
		fmt.Fprintf(&b, `,"config_meta":{"frames":%d}`, r.frames)
	}
	if r.video != "" {
		fmt.Fprintf(&b, `,"video":%q`, r.video)
	}
	return b.String() + "}\n"
}

// verdictOf is a verdict from a hash of the record's identity: every model, task and item its own.
func verdictOf(parts ...any) *bool {
	h := fnv.New32a()
	fmt.Fprint(h, parts...)
	v := h.Sum32()%100 < 55
	return &v
}

// writeStudy writes one records file per model and returns the paths.
func writeStudy(t *testing.T, recs []studyRec) []string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]*strings.Builder{}
	var order []string
	for _, r := range recs {
		if files[r.model] == nil {
			files[r.model] = &strings.Builder{}
			order = append(order, r.model)
		}
		files[r.model].WriteString(r.line())
	}
	var paths []string
	for _, m := range order {
		p := filepath.Join(dir, m+".jsonl")
		if err := os.WriteFile(p, []byte(files[m].String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// splitStudy: three models over two splits that share their item ids (001-1 … 010-2 in both v1 and
// v2), configs text, f8, f16, f128; on v2, llava has no f128 (the paper's case of a model without 128
// frames on one split). Every model has error records: f16 of the first two items of v1.
func splitStudy() []studyRec {
	var out []studyRec
	for _, m := range []string{"qwen", "llava", "intern"} {
		for _, task := range []string{"v1", "v2"} {
			for v := 1; v <= 10; v++ {
				for q := 1; q <= 2; q++ {
					item := fmt.Sprintf("%03d-%d", v, q)
					for _, f := range []int{0, 8, 16, 128} {
						cfg := fmt.Sprintf("f%d", f)
						if f == 0 {
							cfg = "text"
						}
						if f == 128 && task == "v2" && m == "llava" {
							continue
						}
						r := studyRec{model: m, task: task, item: item, config: cfg, frames: f, correct: verdictOf(m, task, item, f),
							video: fmt.Sprintf("videos/%s-%03d.mp4", task, v)}
						if task == "v1" && f == 16 && v == 1 {
							r.correct = nil
						}
						out = append(out, r)
					}
				}
			}
		}
	}
	return out
}

func auditRaw(t *testing.T, args ...string) map[string]json.RawMessage {
	t.Helper()
	rc, out, errs := runAuditCLI(append(append([]string{"audit"}, args...), "--json")...)
	if rc != exitOK {
		t.Fatalf("audit %v: rc %d %s", args, rc, errs)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAuditSplitsAndModels (issue 39): splits that share item ids are two sets of items; a pooled
// multi-model audit matches the grid per split (llava's missing f128 on v2 drops no split: f128 leaves
// the pool, each split keeps its own grid) and reports a table row per split; tasks.S is what
// `--task S` gives; `--model M --task S` audits one model's split; every model keeps its own error
// records, in the JSON and the text summary; the export audits back to its own audit.json byte for
// byte; a split that lacks a model is refused unless --allow-drop; an unknown --task names the tasks.
func TestAuditSplitsAndModels(t *testing.T) {
	recs := splitStudy()
	paths := writeStudy(t, recs)
	args := append(append([]string{}, paths...), "--resamples", "50")
	got := auditRaw(t, args...)
	var info map[string]struct {
		ErrorRecords int `json:"error_records"`
	}
	var perModel map[string]struct {
		ErrorRecords struct{ Count int } `json:"error_records"`
	}
	var pool struct {
		Tasks   []string
		Configs []string
		LeftOut []struct {
			Config       string
			TasksLacking []string `json:"tasks_lacking"`
		} `json:"left_out"`
	}
	var table []struct {
		Model, Split, Duration string
		Items                  int
	}
	var tasks map[string]json.RawMessage
	for k, v := range map[string]any{"model_info": &info, "per_model": &perModel, "pool": &pool, "table": &table, "tasks": &tasks} {
		if err := json.Unmarshal(got[k], v); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	for _, m := range []string{"qwen", "llava", "intern"} {
		if info[m].ErrorRecords != 2 || perModel[m].ErrorRecords.Count != 2 {
			t.Errorf("%s: model_info error_records %d, per_model %d; want 2", m, info[m].ErrorRecords, perModel[m].ErrorRecords.Count)
		}
	}
	if strings.Join(pool.Tasks, ",") != "v1,v2" || strings.Join(pool.Configs, ",") != "text,f8,f16" || len(pool.LeftOut) != 1 ||
		pool.LeftOut[0].Config != "f128" || strings.Join(pool.LeftOut[0].TasksLacking, ",") != "v2" {
		t.Errorf("pool %+v", pool)
	}
	rows := map[string]int{}
	for _, r := range table {
		if r.Duration == "all" {
			rows[r.Model+"/"+r.Split] = r.Items
		}
	}
	// v1 loses its two items with an error record at f16; v2 keeps all 20; the pool both (38).
	for _, m := range []string{"qwen", "llava", "intern"} {
		if rows[m+"/v1"] != 18 || rows[m+"/v2"] != 20 || rows[m+"/all"] != 38 {
			t.Errorf("%s rows %v", m, rows)
		}
	}
	for _, task := range []string{"v1", "v2"} {
		alone := auditRaw(t, append(append([]string{}, args...), "--task", task)...)
		want, _ := json.Marshal(alone)
		var in map[string]json.RawMessage
		testenv.DecodeJSON(t, tasks[task], &in)
		have, _ := json.Marshal(in)
		if string(have) != string(want) {
			t.Errorf("tasks.%s differs from --task %s", task, task)
		}
	}
	var v2Grid struct{ Configs []string }
	var v2 map[string]json.RawMessage
	testenv.DecodeJSON(t, tasks["v2"], &v2)
	testenv.DecodeJSON(t, v2["matched_grid"], &v2Grid)
	if strings.Join(v2Grid.Configs, ",") != "text,f8,f16" {
		t.Errorf("v2 matched grid %v", v2Grid.Configs)
	}
	// --model and --task combine: the one model's audit of one split, as its own records say.
	var own strings.Builder
	for _, r := range recs {
		if r.model == "llava" && r.task == "v1" {
			own.WriteString(r.line())
		}
	}
	ownPath := filepath.Join(t.TempDir(), "llava-v1.jsonl")
	if err := os.WriteFile(ownPath, []byte(own.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	one, _ := json.Marshal(auditRaw(t, append(append([]string{}, args...), "--model", "llava", "--task", "v1")...))
	ref, _ := json.Marshal(auditRaw(t, ownPath, "--resamples", "50"))
	if string(one) != string(ref) || !strings.Contains(string(one), `"best_fixed"`) {
		t.Errorf("--model llava --task v1 is not llava's v1 audit")
	}
	rc, out, errs := runAuditCLI(append([]string{"audit"}, args...)...)
	if rc != exitOK || !strings.Contains(out, "errors") || strings.Count(out, "       2\n") != 3 || !strings.Contains(out, "qwen [v2]") {
		t.Errorf("text summary (rc %d %s):\n%s", rc, errs, out)
	}
	// The export of the multi-model audit with error records audits back to its own audit.json.
	exp := filepath.Join(t.TempDir(), "release")
	rc, first, errs := runAuditCLI(append(append([]string{"audit"}, args...), "--json", "--export", exp)...)
	if rc != exitOK {
		t.Fatalf("--export: %s", errs)
	}
	held, _ := os.ReadFile(filepath.Join(exp, "audit.json"))
	rc, again, errs := runAuditCLI("audit", exp, "--json")
	if rc != exitOK || again != first || string(held) != first {
		t.Errorf("the export does not audit back to its audit.json (rc %d %s)", rc, errs)
	}
	// A split that one model lacks has no matched grid: refused by name, or dropped under --allow-drop.
	extra := filepath.Join(t.TempDir(), "qwen-v3.jsonl")
	var v3 strings.Builder
	for _, r := range recs[:8] {
		r.task = "v3"
		v3.WriteString(r.line())
	}
	os.WriteFile(extra, []byte(v3.String()), 0o644)
	rc, _, errs = runAuditCLI(append(append([]string{"audit"}, args...), extra)...)
	if rc != exitError || !strings.Contains(errs, `task "v3"`) || !strings.Contains(errs, "--allow-drop") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("a split without a grid: rc %d %q", rc, errs)
	}
	dropped := auditRaw(t, append(append([]string{}, args...), extra, "--allow-drop")...)
	if !strings.Contains(string(dropped["pool"]), `"task": "v3"`) || !strings.Contains(string(dropped["notes"]), "dropped under --allow-drop") {
		t.Errorf("--allow-drop: pool %s", dropped["pool"])
	}
	rc, _, errs = runAuditCLI(append(append([]string{"audit"}, args...), "--task", "v9")...)
	if rc != exitError || !strings.Contains(errs, `"v1", "v2"`) {
		t.Errorf("--task v9: rc %d %q", rc, errs)
	}
}

// TestAuditUnknownCostIsUndefined (issue 39): configs whose names carry no budget and whose records no
// frames have unknown cost: every metric that needs an order is null with its reason (JSON
// "undefined"), the cross-model confusion too; the reports say so, and never "confused in 0 models".
func TestAuditUnknownCostIsUndefined(t *testing.T) {
	var recs []studyRec
	for _, m := range []string{"a", "b", "c", "d"} {
		for i := 0; i < 12; i++ {
			for _, c := range []string{"16f_151k", "128f_151k", "64f_76k"} {
				item := fmt.Sprintf("q%02d", i)
				recs = append(recs, studyRec{model: m, item: item, config: c, frames: -1, correct: verdictOf(m, item, c)})
			}
		}
	}
	paths := writeStudy(t, recs)
	dir := t.TempDir()
	html, md := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.md")
	got := auditRaw(t, append(paths, "--resamples", "20", "--html", html, "--md", md)...)
	var cm struct {
		ConfusedInK []any             `json:"confused_in_k"`
		Confused    map[string]int    `json:"confused"`
		Undefined   map[string]string `json:"undefined"`
	}
	testenv.DecodeJSON(t, got["cross_model"], &cm)
	if cm.ConfusedInK != nil || cm.Confused != nil || !strings.Contains(cm.Undefined["confused_in_k"], "unknown cost") {
		t.Errorf("cross_model %s", got["cross_model"])
	}
	var per map[string]struct {
		VisualConfusionRate    *float64          `json:"visual_confusion_rate"`
		TerminalRegressionRate *float64          `json:"terminal_regression_rate"`
		OracleHeadroom         *float64          `json:"oracle_headroom"`
		Transitions            []any             `json:"transitions"`
		Undefined              map[string]string `json:"undefined"`
	}
	testenv.DecodeJSON(t, got["per_model"], &per)
	for m, r := range per {
		if r.VisualConfusionRate != nil || r.TerminalRegressionRate != nil || r.OracleHeadroom == nil || len(r.Transitions) != 0 {
			t.Errorf("%s: confusion %v terminal %v headroom %v transitions %v", m, r.VisualConfusionRate, r.TerminalRegressionRate, r.OracleHeadroom, r.Transitions)
		}
		for _, k := range []string{"visual_confusion_rate", "terminal_regression_rate", "pairs", "transitions"} {
			if !strings.Contains(r.Undefined[k], "128f_151k, 16f_151k, 64f_76k have unknown cost") {
				t.Errorf("%s: undefined[%s] = %q", m, k, r.Undefined[k])
			}
		}
	}
	rc, out, _ := runAuditCLI(append([]string{"audit"}, append(paths, "--resamples", "0")...)...)
	h, _ := os.ReadFile(html)
	mdb, _ := os.ReadFile(md)
	if rc != exitOK || strings.Contains(out, "confused in k models 0:") || !strings.Contains(out, "confused sets: undefined") ||
		strings.Contains(string(h), `Confused in all</div><div class="v">0`) || !strings.Contains(string(h), "unknown cost") ||
		strings.Contains(string(mdb), " 0: 12 (100.0%)") || !strings.Contains(string(mdb), "undefined (—)") {
		t.Errorf("reports show a number for an undefined confusion (rc %d):\n%s", rc, out)
	}
}

// TestAuditCostOverflow (issue 40): 999999999999 frames at 65536² would wrap frames × width × height
// to a negative cost and order the config before text-only; the audit refuses it, naming the record.
func TestAuditCostOverflow(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.jsonl")
	var b strings.Builder
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&b, `{"item_id":"q%d","config":"text","correct":%v,"config_meta":{"frames":0,"text_only":true}}`+"\n", i, i%2 == 0)
		fmt.Fprintf(&b, `{"item_id":"q%d","config":"huge","correct":%v,"config_meta":{"frames":999999999999,"width":65536,"height":65536}}`+"\n", i, i%3 == 0)
	}
	os.WriteFile(p, []byte(b.String()), 0o644)
	rc, out, errs := runAuditCLI("audit", p, "--json", "--resamples", "0")
	if rc != exitError || out != "" || !strings.Contains(errs, "huge.jsonl:2") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("rc %d, stderr %q (stdout %.200s)", rc, errs, out)
	}
}

// TestAuditClusterCLI (issue 39): records that name their video, three questions per video: the
// intervals resample videos ("cluster": "video"), wider than --cluster item's with the same point
// estimates; the choice is recorded in an export; an unknown unit is a usage error.
func TestAuditClusterCLI(t *testing.T) {
	var recs []studyRec
	for v := 0; v < 15; v++ {
		for q := 1; q <= 3; q++ {
			for _, f := range []int{0, 8, 16} {
				recs = append(recs, studyRec{model: "m", item: fmt.Sprintf("%03d-%d", v, q), config: fmt.Sprintf("f%d", f), frames: f,
					correct: verdictOf(v, f), video: fmt.Sprintf("videos/%03d.mp4", v)})
			}
		}
	}
	paths := writeStudy(t, recs)
	type ci struct{ Lo, Hi float64 }
	var video, item struct {
		Bootstrap struct {
			Cluster  string
			Clusters int
		}
		OracleHeadroom   float64 `json:"oracle_headroom"`
		OracleHeadroomCI ci      `json:"oracle_headroom_ci"`
	}
	for _, c := range []struct {
		dst  any
		args []string
	}{{&video, nil}, {&item, []string{"--cluster", "item"}}} {
		rc, out, errs := runAuditCLI(append([]string{"audit", paths[0], "--json", "--resamples", "300"}, c.args...)...)
		if rc != exitOK || json.Unmarshal([]byte(out), c.dst) != nil {
			t.Fatalf("%v: rc %d %s", c.args, rc, errs)
		}
	}
	if video.Bootstrap.Cluster != "video" || video.Bootstrap.Clusters != 15 || item.Bootstrap.Cluster != "item" || video.OracleHeadroom != item.OracleHeadroom ||
		video.OracleHeadroomCI.Hi-video.OracleHeadroomCI.Lo <= item.OracleHeadroomCI.Hi-item.OracleHeadroomCI.Lo {
		t.Errorf("video %+v, item %+v", video, item)
	}
	exp := filepath.Join(t.TempDir(), "x")
	if rc, _, errs := runAuditCLI("audit", paths[0], "--cluster", "item", "--export", exp); rc != exitOK {
		t.Fatal(errs)
	}
	if m, _ := os.ReadFile(filepath.Join(exp, "export.json")); !strings.Contains(string(m), `"cluster": "item"`) {
		t.Errorf("export.json does not record --cluster item")
	}
	if rc, _, errs := runAuditCLI("audit", paths[0], "--cluster", "clip"); rc != exitUsage || !strings.Contains(errs, "video-id") {
		t.Errorf("--cluster clip: rc %d %q", rc, errs)
	}
}
