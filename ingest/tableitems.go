package ingest

import (
	"fmt"
	"sort"
	"strings"
)

// TableItem is what an items file says about one item: its answer and the fields a record carries.
type TableItem struct {
	ItemID, Answer, Task, Category, Duration string
}

// TableItems are an items file's items by their identity, (task, item id): splits of one benchmark
// share ids (Video-MME v1 and v2 both have 001-1), so the same id in two tasks is two items.
type TableItems struct {
	byKey map[itemKey]TableItem
	tasks map[string][]string // item id → the tasks that have it
}

type itemKey struct{ task, id string }

// NewTableItems is an empty set of items.
func NewTableItems() *TableItems {
	return &TableItems{byKey: map[itemKey]TableItem{}, tasks: map[string][]string{}}
}

// Add adds an item; false when its (task, item id) is already there.
func (ti *TableItems) Add(it TableItem) bool {
	k := itemKey{it.Task, it.ItemID}
	if _, dup := ti.byKey[k]; dup {
		return false
	}
	ti.byKey[k] = it
	ti.tasks[it.ItemID] = append(ti.tasks[it.ItemID], it.Task)
	return true
}

// Len is the number of items.
func (ti *TableItems) Len() int { return len(ti.byKey) }

// lookup finds the item a table row names: id (or prefix+id: the items file may name the ids with
// their prefix) in task, else an item of that id with no task; with no task (the row has no task
// column and no --task is given), the one item of that id. ok is false when there is none; err says
// why a row cannot be matched (an id of several tasks, and the row names none).
func (ti *TableItems) lookup(task, id, prefix string) (it TableItem, ok bool, err error) {
	cands := []string{id}
	if prefix != "" {
		cands = append(cands, prefix+id)
	}
	for _, cand := range cands {
		if task != "" {
			if it, ok = ti.byKey[itemKey{task, cand}]; ok {
				return it, true, nil
			}
			if it, ok = ti.byKey[itemKey{"", cand}]; ok {
				return it, true, nil
			}
			continue
		}
		switch ts := ti.tasks[cand]; len(ts) {
		case 0:
		case 1:
			return ti.byKey[itemKey{ts[0], cand}], true, nil
		default:
			sorted := append([]string(nil), ts...)
			sort.Strings(sorted)
			return TableItem{}, false, fmt.Errorf("item %q is in %d tasks of the items file (%s): name the row's task with a task (split) column or --task", cand, len(ts), strings.Join(sorted, ", "))
		}
	}
	return TableItem{}, false, nil
}

// tasksOf lists the tasks the items file has id in, for an error.
func (ti *TableItems) tasksOf(id, prefix string) string {
	ts := append(append([]string(nil), ti.tasks[id]...), ti.tasks[prefix+id]...)
	sort.Strings(ts)
	return strings.Join(ts, ", ")
}
