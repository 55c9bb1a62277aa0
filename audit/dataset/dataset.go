package dataset

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/record"
)

// ErrBadArgs: an analysis option does not fit the records (unknown budget, ambiguous config, more
// configs or cells than an audit handles). audit.ErrBadArgs is this same value, so errors.Is
// classifies the errors of the whole analysis (dataset, cascade, metrics) with either name.
var ErrBadArgs = errors.New("bad analysis options")

// MaxConfigs bounds the configs of one dataset (the audit's pairs grow with its square).
const MaxConfigs = 512

// maxCells bounds items × configs (4 bytes each).
const maxCells = 1 << 28

// Dataset is the records arranged as item × config with the primary run of each cell. An item is
// (task, item id): the same id under two tasks (two splits of a benchmark) is two items.
type Dataset struct {
	Configs []*Config // display order (SortConfigs)
	Items   []string  // item ids, sorted by id then task
	Tasks   []string  // each item's task (record.Record.Task; "" for none), parallel to Items
	Recs    []record.Record
	Grid    []int32   // len(Items)*len(Configs), row-major by item: index into Recs or -1
	Reruns  [][]int32 // per config: record indices that are not the primary run

	multiTask bool // the items are of more than one task
}

// Cell is the primary record of item i at config k, nil when the item has none there.
func (d *Dataset) Cell(i, k int) *record.Record {
	if j := d.Grid[i*len(d.Configs)+k]; j >= 0 {
		return &d.Recs[j]
	}
	return nil
}

// Build indexes the records, merges config metadata, and separates primary runs from reruns. Error
// records (record.Record.Failed) must be left out first (Answered).
func Build(recs []record.Record) (*Dataset, error) {
	if len(recs) == 0 {
		return nil, record.Errorf("", 0, "analyze", record.ErrEmpty, "nothing to analyse")
	}
	sc, err := scanRecords(recs)
	if err != nil {
		return nil, err
	}
	order := sc.configs
	firstOrder := append([]*Config(nil), order...)
	for _, c := range order {
		if err := c.FinishCost(); err != nil {
			return nil, err
		}
	}
	SortConfigs(order)
	d := &Dataset{Configs: order, Recs: recs}
	cidx := make(map[string]int, len(order))
	for k, c := range order {
		cidx[c.ID] = k
	}
	items, itemPerm := sortItems(sc.items)
	cfgPerm := make([]int, len(firstOrder))
	for fi, c := range firstOrder {
		cfgPerm[fi] = cidx[c.ID]
	}
	d.Items, d.Tasks = make([]string, len(items)), make([]string, len(items))
	for i, k := range items {
		d.Items[i], d.Tasks[i] = k.ID, k.Task
		d.multiTask = d.multiTask || k.Task != items[0].Task
	}
	C := len(order)
	// Bounds keep hostile inputs in check: pairs grow with C², the grid with items × C.
	if C > MaxConfigs {
		return nil, record.Errorf(recs[0].Source.Path, 0, "analyze", ErrBadArgs, "%d configs; the audit handles at most %d", C, MaxConfigs)
	}
	if int64(len(items))*int64(C) > maxCells {
		return nil, record.Errorf(recs[0].Source.Path, 0, "analyze", ErrBadArgs, "%d items × %d configs is over %d cells", len(items), C, maxCells)
	}
	if err := d.place(sc, itemPerm, cfgPerm); err != nil {
		return nil, err
	}
	return d, nil
}

// recordScan is the first pass over the records: the configs in first-seen order with their merged
// metadata, the items in first-seen order, and each record's item and config by those orders (so the
// second pass needs no map lookups).
type recordScan struct {
	configs []*Config
	items   []ItemKey
	recItem []int32
	recCfg  []int32
}

func scanRecords(recs []record.Record) (*recordScan, error) {
	sc := &recordScan{recItem: make([]int32, len(recs)), recCfg: make([]int32, len(recs))}
	byID := map[string]*Config{}
	kindSrc := map[string]record.Source{}
	itemIdx := map[ItemKey]int{}
	cfgFirst := map[*Config]int32{}
	var last *Config
	for i := range recs {
		r := &recs[i]
		c := last
		if c == nil || c.ID != r.Config {
			c = byID[r.Config]
		}
		if c == nil {
			c = &Config{ID: r.Config}
			byID[r.Config] = c
			cfgFirst[c] = int32(len(sc.configs))
			sc.configs = append(sc.configs, c)
		}
		last = c
		sc.recCfg[i] = cfgFirst[c]
		kind := "multiple_choice"
		if r.Score != nil {
			kind = "open_ended"
		}
		if c.Kind == "" {
			c.Kind, kindSrc[c.ID] = kind, r.Source
		} else if c.Kind != kind {
			s := kindSrc[c.ID]
			return nil, record.Errorf(r.Source.Path, r.Source.Line, "analyze", record.ErrInvalid,
				"config %q mixes correct and score records (first kind at %s:%d)", c.ID, s.Path, s.Line)
		}
		if r.ConfigMeta != nil {
			if err := c.Merge(r.ConfigMeta, r.Source); err != nil {
				return nil, err
			}
		}
		c.Records++
		key := KeyOf(r)
		ii, ok := itemIdx[key]
		if !ok {
			ii = len(sc.items)
			itemIdx[key] = ii
			sc.items = append(sc.items, key)
		}
		sc.recItem[i] = int32(ii)
	}
	return sc, nil
}

// ItemKey is an item's identity: its task (split) and its id.
type ItemKey struct{ Task, ID string }

// KeyOf is the identity of r's item.
func KeyOf(r *record.Record) ItemKey { return ItemKey{r.Task, r.ItemID} }

// String is the id, prefixed by the task when there is one ("task/id"): how examples name an item.
func (k ItemKey) String() string {
	if k.Task == "" {
		return k.ID
	}
	return k.Task + "/" + k.ID
}

// Key is item i's identity.
func (d *Dataset) Key(i int) ItemKey { return ItemKey{d.Tasks[i], d.Items[i]} }

// Name is how examples name item i: its id, or "task/id" when the items are of several tasks.
func (d *Dataset) Name(i int) string {
	if d.multiTask {
		return d.Key(i).String()
	}
	return d.Items[i]
}

// sortItems sorts the items by id, then task (so that items of one task, or of distinct ids, keep the
// order of their ids); perm maps a first-seen index to the sorted one.
func sortItems(items []ItemKey) (sorted []ItemKey, perm []int32) {
	order := make([]int32, len(items))
	for i := range order {
		order[i] = int32(i)
	}
	sort.Slice(order, func(a, b int) bool {
		x, y := items[order[a]], items[order[b]]
		if x.ID != y.ID {
			return x.ID < y.ID
		}
		return x.Task < y.Task
	})
	perm = make([]int32, len(items))
	sorted = make([]ItemKey, len(items))
	for si, fi := range order {
		perm[fi] = int32(si)
		sorted[si] = items[fi]
	}
	return sorted, perm
}

// place puts every record in its (item, config) cell: the lowest run in the grid, other runs of the
// cell as reruns (each run value once per cell: a second record of one run is ErrDuplicate).
func (d *Dataset) place(sc *recordScan, itemPerm []int32, cfgPerm []int) error {
	recs, C := d.Recs, len(d.Configs)
	d.Grid = make([]int32, len(d.Items)*C)
	for i := range d.Grid {
		d.Grid[i] = -1
	}
	d.Reruns = make([][]int32, C)
	runsSeen := make([]map[int]bool, C) // runs other than 0
	run0 := make([]bool, C)
	var cellRuns map[[2]int]int32 // (cell, run) → record, only for cells holding reruns
	for j := range recs {
		r := &recs[j]
		k := cfgPerm[sc.recCfg[j]]
		cell := int(itemPerm[sc.recItem[j]])*C + k
		slot := &d.Grid[cell]
		if r.Run == nil || *r.Run == 0 {
			run0[k] = true
		} else {
			if runsSeen[k] == nil {
				runsSeen[k] = map[int]bool{}
			}
			runsSeen[k][*r.Run] = true
		}
		if *slot < 0 {
			*slot = int32(j)
			continue
		}
		// A second record for the cell: it must be a rerun with a run value not seen for this cell yet.
		if cellRuns == nil {
			cellRuns = map[[2]int]int32{}
		}
		if _, ok := cellRuns[[2]int{cell, recs[*slot].RunIndex()}]; !ok {
			cellRuns[[2]int{cell, recs[*slot].RunIndex()}] = *slot
		}
		if first, dup := cellRuns[[2]int{cell, r.RunIndex()}]; dup {
			prev := &recs[first]
			what := "declare reruns with distinct \"run\" values"
			return record.Errorf(r.Source.Path, r.Source.Line, "analyze", record.ErrDuplicate,
				"item %q%s config %q run %d already recorded at %s:%d (%s)", r.ItemID, taskOf(r), r.Config, r.RunIndex(), prev.Source.Path, prev.Source.Line, what)
		}
		cellRuns[[2]int{cell, r.RunIndex()}] = int32(j)
		prev := &recs[*slot]
		if r.RunIndex() < prev.RunIndex() {
			d.Reruns[k] = append(d.Reruns[k], *slot)
			*slot = int32(j)
		} else {
			d.Reruns[k] = append(d.Reruns[k], int32(j))
		}
	}
	for k, c := range d.Configs {
		c.Reruns = len(runsSeen[k]) - 1 // distinct run values beyond the first; run 0 counts when seen
		if run0[k] {
			c.Reruns++
		}
	}
	return nil
}

// taskOf names r's task for an error message ("" when it has none).
func taskOf(r *record.Record) string {
	if r.Task == "" {
		return ""
	}
	return fmt.Sprintf(" (task %q)", r.Task)
}

// SourcePaths lists the distinct files the records came from, comma-separated: the path of an
// error that no one record is at fault for.
func SourcePaths(recs []record.Record) string {
	var paths []string
	seen := map[string]bool{}
	prev := ""
	for i := range recs {
		p := recs[i].Source.Path
		if p == "" || p == prev || seen[p] {
			continue
		}
		prev, seen[p] = p, true
		paths = append(paths, p)
	}
	return strings.Join(paths, ",")
}

// Answered leaves out the error records (record.Record.Failed): they carry no verdict. A RUN read by
// runs.ReadAll holds them last, and then the answers are not copied.
func Answered(recs []record.Record) []record.Record {
	n := 0
	for i := range recs {
		if recs[i].Failed() {
			n++
		}
	}
	switch {
	case n == 0:
		return recs
	case errorSuffix(recs, n):
		return recs[:len(recs)-n]
	}
	ok := make([]record.Record, 0, len(recs)-n)
	for i := range recs {
		if !recs[i].Failed() {
			ok = append(ok, recs[i])
		}
	}
	return ok
}

// errorSuffix reports whether the n error records of recs are its last n.
func errorSuffix(recs []record.Record, n int) bool {
	for i := len(recs) - n; i < len(recs); i++ {
		if !recs[i].Failed() {
			return false
		}
	}
	return true
}
