package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// splitRecords: one model, tasks v1 and v2 sharing the ids q0…q9, configs text, f8, f16, f32; v2 has
// no f32.
func splitRecords() []record.Record {
	var out []record.Record
	for _, task := range []string{"v1", "v2"} {
		for i := 0; i < 10; i++ {
			for _, f := range []int{0, 8, 16, 32} {
				if task == "v2" && f == 32 {
					continue
				}
				meta := metaF(f, 10, 10, "uniform")
				if f == 0 {
					meta = &record.ConfigMeta{Frames: ip(0), TextOnly: bp(true)}
				}
				out = append(out, record.Record{ItemID: fmt.Sprintf("q%d", i), Task: task, Config: fmt.Sprintf("f%d", f), ConfigMeta: meta,
					Correct: bp((i*7+f/8*3+len(task))%5 < 3), Source: record.Source{Path: task + ".jsonl", Line: len(out) + 1}})
			}
		}
	}
	return out
}

// TestOneModelTasks: one model's records of two splits sharing ids are audited per split (each the
// audit of its records alone) and pooled on the configs both have (f32, which v2 lacks, leaves the
// pool, not v2's items); Task selects one; a split with nothing to audit is an error naming it, or
// dropped under AllowDrop.
func TestOneModelTasks(t *testing.T) {
	recs := splitRecords()
	opt := ModelsOptions{Options: DefaultOptions()}
	opt.Resamples = 100
	out, err := AnalyzeAll(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Single
	if res.Items != 20 || len(res.Tasks) != 2 || res.Pool == nil || strings.Join(res.Pool.Configs, ",") != "f0,f8,f16" ||
		len(res.Pool.LeftOut) != 1 || res.Pool.LeftOut[0].Config != "f32" || res.Pool.LeftOut[0].TasksLacking[0] != "v2" {
		t.Fatalf("pooled %d items, pool %+v", res.Items, res.Pool)
	}
	for _, task := range []string{"v1", "v2"} {
		var mine []record.Record
		for _, r := range recs {
			if r.Task == task {
				mine = append(mine, r)
			}
		}
		alone, err := Analyze(mine, opt.Options)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(alone)
		b, _ := json.Marshal(res.Tasks[task])
		if string(a) != string(b) {
			t.Errorf("tasks[%s] is not the audit of its records", task)
		}
		sel := opt
		sel.Task = task
		one, err := AnalyzeAll(recs, sel)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := json.Marshal(one.Single)
		if string(c) != string(a) || one.Single.Tasks != nil {
			t.Errorf("Task %s is not the audit of its records", task)
		}
	}
	if n := len(res.Tasks["v1"].MCConfigs); n != 4 {
		t.Errorf("v1 keeps its own grid: %d configs", n)
	}
	// v3: error records only.
	bad := append([]record.Record(nil), recs...)
	bad = append(bad, record.Record{ItemID: "q0", Task: "v3", Config: "f8", Status: record.StatusError, Error: "unreadable"})
	if _, err := AnalyzeAll(bad, opt); !errors.Is(err, ErrNothingPaired) || !strings.Contains(err.Error(), `task "v3"`) || !strings.Contains(err.Error(), "--allow-drop") {
		t.Errorf("a task with no grid: %v", err)
	}
	opt.AllowDrop = true
	got, err := AnalyzeAll(bad, opt)
	if err != nil || len(got.Single.Pool.Dropped) != 1 || got.Single.Pool.Dropped[0].Task != "v3" || got.Single.ErrorRecords.Count != 1 {
		t.Errorf("--allow-drop: %v %+v", err, got)
	}
	if _, err := AnalyzeAll(recs, ModelsOptions{Options: DefaultOptions(), Task: "v9"}); !errors.Is(err, ErrBadArgs) || !strings.Contains(err.Error(), `"v1", "v2"`) {
		t.Errorf("unknown task: %v", err)
	}
}
