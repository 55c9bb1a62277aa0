package dataset

import (
	"errors"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

func rec(item, config string, frames int, run int) record.Record {
	ok := true
	r := record.Record{ItemID: item, Config: config, Correct: &ok, ConfigMeta: &record.ConfigMeta{Frames: &frames}}
	if run != 0 {
		r.Run = &run
	}
	return r
}

// TestBuild: configs in cost order (text-only first), items sorted, the lowest run in the cell and the
// others as reruns, an absent cell nil; a second record of one run is ErrDuplicate.
func TestBuild(t *testing.T) {
	recs := []record.Record{rec("b", "f16", 16, 1), rec("a", "f16", 16, 0), rec("b", "text", 0, 0), rec("b", "f16", 16, 0)}
	d, err := Build(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Configs) != 2 || d.Configs[0].ID != "text" || !d.Configs[0].TextOnly || d.Configs[1].ID != "f16" || *d.Configs[1].Cost != 16 {
		t.Fatalf("configs %+v %+v", d.Configs[0], d.Configs[1])
	}
	if len(d.Items) != 2 || d.Items[0] != "a" || d.Items[1] != "b" {
		t.Fatalf("items %v", d.Items)
	}
	if d.Cell(0, 0) != nil || d.Cell(1, 1) != &d.Recs[3] || d.Cell(0, 1) != &d.Recs[1] {
		t.Errorf("cells: a/text %v, b/f16 %v, a/f16 %v", d.Cell(0, 0), d.Cell(1, 1), d.Cell(0, 1))
	}
	if len(d.Reruns[1]) != 1 || d.Reruns[1][0] != 0 || d.Configs[1].Reruns != 1 {
		t.Errorf("reruns %v, config reruns %d", d.Reruns, d.Configs[1].Reruns)
	}
	if _, err := Build(append(recs, rec("a", "f16", 16, 0))); !errors.Is(err, record.ErrDuplicate) {
		t.Errorf("duplicate run: %v", err)
	}
	conflict := rec("a", "text", 8, 0)
	if _, err := Build(append(recs, conflict)); !errors.Is(err, record.ErrConflict) {
		t.Errorf("frames 8 and 0 for one config: %v", err)
	}
}

// TestAnswered: error records are left out; when they are the last ones (as runs.ReadAll puts them)
// the answers are the same array, not a copy.
func TestAnswered(t *testing.T) {
	failed := rec("x", "f16", 16, 0)
	failed.Status, failed.Correct = record.StatusError, nil
	recs := []record.Record{rec("a", "f16", 16, 0), rec("b", "f16", 16, 0), failed}
	got := Answered(recs)
	if len(got) != 2 || &got[0] != &recs[0] {
		t.Errorf("suffix: %d records, copied %v", len(got), len(got) > 0 && &got[0] != &recs[0])
	}
	mixed := []record.Record{failed, rec("a", "f16", 16, 0)}
	if got := Answered(mixed); len(got) != 1 || got[0].ItemID != "a" {
		t.Errorf("mixed: %+v", got)
	}
	if got := Answered(recs[:2]); &got[0] != &recs[0] || len(got) != 2 {
		t.Error("no error records: not the input")
	}
}

// TestItemIsTaskAndID: the same id under two tasks is two items (the split is part of the identity),
// sorted by id then task; examples name them task/id; a duplicate names the task.
func TestItemIsTaskAndID(t *testing.T) {
	a, b := rec("001-1", "f16", 16, 0), rec("001-1", "f16", 16, 0)
	a.Task, b.Task = "v2", "v1"
	c := rec("000-9", "f16", 16, 0)
	c.Task = "v2"
	d, err := Build([]record.Record{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Items) != 3 || d.Key(1) != (ItemKey{"v1", "001-1"}) || d.Key(2) != (ItemKey{"v2", "001-1"}) || d.Name(2) != "v2/001-1" {
		t.Fatalf("items %v tasks %v", d.Items, d.Tasks)
	}
	if _, err := Build([]record.Record{a, b, a}); !errors.Is(err, record.ErrDuplicate) || !strings.Contains(err.Error(), `(task "v2")`) {
		t.Errorf("duplicate within a task: %v", err)
	}
	one, _ := Build([]record.Record{rec("x", "f8", 8, 0)})
	if one.Name(0) != "x" {
		t.Errorf("one task: %q", one.Name(0))
	}
}
