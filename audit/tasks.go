package audit

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/record"
)

// Splits are first-class: an item is (task, item id), and records of several tasks (the splits of a
// benchmark, record.Record.Task) are audited per task, each task on its own grid (one model: the
// configs its records of that task have; several: their matched grid over that task's records), then
// pooled over the configs in every task's grid. A task with no grid at all is an error unless the
// options allow dropping it; then it is named in Pool.Dropped.

// Pool says how an audit of several tasks pooled them.
type Pool struct {
	Tasks []string `json:"tasks"` // the tasks pooled, each also audited alone (Result.Tasks)
	// Configs are the configs in every pooled task's grid: the pooled audit's.
	Configs []string `json:"configs"`
	// LeftOut are the configs of some task's grid that another task's grid lacks.
	LeftOut []PoolLeftOut `json:"left_out"`
	// Dropped are the tasks with no grid at all, left out under --allow-drop.
	Dropped []DroppedTask `json:"dropped_tasks"`
}

// PoolLeftOut is a config left out of the pool and the tasks whose grid lacks it.
type PoolLeftOut struct {
	Config       string   `json:"config"`
	TasksLacking []string `json:"tasks_lacking"`
}

// DroppedTask is a task left out of a pooled audit, and why.
type DroppedTask struct {
	Task   string `json:"task"`
	Reason string `json:"reason"`
}

// TaskNames lists the distinct tasks of the records ("" for records that name none), sorted.
func TaskNames(recs []record.Record) []string {
	seen := map[string]bool{}
	var out []string
	last := "\x00"
	for i := range recs {
		if t := recs[i].Task; t != last && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
		last = recs[i].Task
	}
	sort.Strings(out)
	return out
}

// selectTask keeps the records of task (all when task is ""); a task no record names is an error
// naming the tasks there are.
func selectTask(recs []record.Record, task string) ([]record.Record, error) {
	if task == "" {
		return recs, nil
	}
	var out []record.Record
	for i := range recs {
		if recs[i].Task == task {
			out = append(out, recs[i])
		}
	}
	if len(out) == 0 {
		return nil, record.Errorf(dataset.SourcePaths(recs), 0, "audit", ErrBadArgs, "--task %q: no record is of that task (tasks: %s)", task, quoteList(TaskNames(recs)))
	}
	return out, nil
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// byTask splits the records by task (in TaskNames order) and returns the error records apart.
func byTask(recs []record.Record) (map[string][]record.Record, []record.Record) {
	out := map[string][]record.Record{}
	var errs []record.Record
	for i := range recs {
		out[recs[i].Task] = append(out[recs[i].Task], recs[i])
		if recs[i].Failed() {
			errs = append(errs, recs[i])
		}
	}
	return out, errs
}

// newPool intersects the grids of the tasks (grids[t]: the configs of task t's grid, display order;
// nil for a task with no grid, which is dropped with why[t] or, unless allowed, an error).
func newPool(tasks []string, grids map[string][]string, why map[string]string, opt ModelsOptions, recs []record.Record) (*Pool, map[string]bool, error) {
	p := &Pool{Tasks: []string{}, Configs: []string{}, LeftOut: []PoolLeftOut{}, Dropped: []DroppedTask{}}
	count := map[string]int{}
	var order []string
	for _, t := range tasks {
		if grids[t] == nil {
			if !opt.AllowDrop {
				return nil, nil, record.Errorf(dataset.SourcePaths(recs), 0, "audit", ErrNothingPaired,
					"task %q has no grid to audit (%s): it would be dropped from the pooled audit; audit it alone (--task %q) to see why, or give --allow-drop to audit the other tasks without it", t, why[t], t)
			}
			p.Dropped = append(p.Dropped, DroppedTask{Task: t, Reason: why[t]})
			continue
		}
		p.Tasks = append(p.Tasks, t)
		for _, c := range grids[t] {
			if count[c] == 0 {
				order = append(order, c)
			}
			count[c]++
		}
	}
	in := map[string]bool{}
	for _, c := range order {
		if count[c] == len(p.Tasks) {
			in[c] = true
			p.Configs = append(p.Configs, c)
			continue
		}
		lo := PoolLeftOut{Config: c, TasksLacking: []string{}}
		for _, t := range p.Tasks {
			if !slices.Contains(grids[t], c) {
				lo.TasksLacking = append(lo.TasksLacking, t)
			}
		}
		p.LeftOut = append(p.LeftOut, lo)
	}
	return p, in, nil
}

// note says in one line how the tasks were pooled.
func (p *Pool) note() string {
	s := fmt.Sprintf("%d tasks (%s), each audited on its own grid (tasks); pooled on the configs in every task's grid (%s)", len(p.Tasks), strings.Join(p.Tasks, ", "), strings.Join(p.Configs, ", "))
	if len(p.Configs) == 0 {
		s = fmt.Sprintf("%d tasks (%s), each audited on its own grid (tasks); no config is in every task's grid, so nothing is pooled", len(p.Tasks), strings.Join(p.Tasks, ", "))
	}
	for _, lo := range p.LeftOut {
		s += fmt.Sprintf("; %s left out of the pool (not in the grid of %s)", lo.Config, strings.Join(lo.TasksLacking, ", "))
	}
	for _, d := range p.Dropped {
		s += fmt.Sprintf("; task %s dropped under --allow-drop (%s)", d.Task, d.Reason)
	}
	return s
}

// pooledRecords are the answered records of the pooled tasks in the pool's configs, then the error
// records (all of them: an audit counts every error record of its input).
func pooledRecords(per map[string][]record.Record, p *Pool, in map[string]bool, errs []record.Record) []record.Record {
	var out []record.Record
	for _, t := range p.Tasks {
		for i := range per[t] {
			if r := &per[t][i]; !r.Failed() && in[r.Config] {
				out = append(out, *r)
			}
		}
	}
	return append(out, errs...)
}

// tasksOf are the tasks of the records of the models named.
func tasksOf(recs []record.Record, models []string) []string {
	var sel []record.Record
	for i := range recs {
		if slices.Contains(models, recs[i].Model) {
			sel = append(sel, recs[i])
		}
	}
	return TaskNames(sel)
}

// whyTasksApart explains tasks whose grids share no config, so nothing pools: the configs of each,
// and whether their items would meet under one task name (then import --task) or never meet (then
// the flags that map the ids, as for configs whose ids never meet).
func whyTasksApart(recs []record.Record, tasks []string) string {
	type side struct {
		config, harness string
		items           map[dataset.ItemKey]bool
		configs         []string
	}
	sides := map[string]*side{}
	for i := range recs {
		r := &recs[i]
		if r.Failed() {
			continue
		}
		sd := sides[r.Task]
		if sd == nil {
			sd = &side{config: r.Config, items: map[dataset.ItemKey]bool{}}
			sides[r.Task] = sd
		}
		if !slices.Contains(sd.configs, r.Config) {
			sd.configs = append(sd.configs, r.Config)
		}
		if r.Config == sd.config {
			sd.items[dataset.KeyOf(r)] = true
			if r.Harness != nil && sd.harness == "" {
				sd.harness, _, _ = strings.Cut(r.Harness.Metric, " ")
			}
		}
	}
	var parts, seen []string // the tasks in the order the records give them
	for i := range recs {
		if t := recs[i].Task; sides[t] != nil && slices.Contains(tasks, t) && !slices.Contains(seen, t) {
			seen = append(seen, t)
			parts = append(parts, fmt.Sprintf("%q: %s", t, strings.Join(sides[t].configs, ", ")))
		}
	}
	s := fmt.Sprintf("the %d tasks' grids share no config (%s), so nothing pools", len(tasks), strings.Join(parts, "; "))
	a, b := sides[seen[0]], sides[seen[1]]
	bare := func(set map[dataset.ItemKey]bool) map[dataset.ItemKey]bool {
		out := map[dataset.ItemKey]bool{}
		for k := range set {
			out[dataset.ItemKey{ID: k.ID}] = true
		}
		return out
	}
	if meet(bare(a.items), bare(b.items)) || taskAdvice(a.items, b.items, idNamespace(a.items), idNamespace(b.items)) != "" {
		return s + fmt.Sprintf("; their item ids meet: if they are one split under two names (lmms-eval names Video-MME %q, VLMEvalKit %q), import them under one task name (import --task); to audit each task alone, give --task", "videomme", "Video-MME")
	}
	return s + "; and " + neverMeet(a.config, a.harness, bare(a.items), b.config, b.harness, bare(b.items)) +
		"; import them under one task name too (import --task), or audit each task alone with --task"
}

// missingModels are the models of all that no record of recs names.
func missingModels(all []string, recs []record.Record) []string {
	have := Models(recs)
	var out []string
	for _, m := range all {
		if !slices.Contains(have, m) {
			out = append(out, m)
		}
	}
	return out
}

// analyzeOneTasks audits one model's records of several tasks: each task alone, then the pool.
func analyzeOneTasks(recs []record.Record, tasks []string, opt ModelsOptions) (*Result, error) {
	per, errs := byTask(recs)
	results := map[string]*Result{}
	grids, why := map[string][]string{}, map[string]string{}
	for _, t := range tasks {
		if len(dataset.Answered(per[t])) == 0 {
			why[t] = whyEmpty(per[t]) // error records alone: nothing to analyse
			continue
		}
		r, err := Analyze(per[t], opt.Options)
		if err != nil {
			return nil, err
		}
		results[t] = r
		if r.Empty() {
			why[t] = whyEmpty(per[t])
			continue
		}
		grids[t] = []string{}
		for _, c := range r.Configs {
			grids[t] = append(grids[t], c.ID)
		}
	}
	p, in, err := newPool(tasks, grids, why, opt, recs)
	if err != nil {
		return nil, err
	}
	if len(p.Tasks) > 1 && len(p.Configs) == 0 {
		return nil, record.Errorf(dataset.SourcePaths(recs), 0, "audit", ErrNothingPaired, "%s", whyTasksApart(recs, p.Tasks))
	}
	pooled := pooledRecords(per, p, in, errs)
	var res *Result
	if len(p.Configs) == 0 {
		res, err = emptyResult(pooled, opt.Options)
	} else {
		res, err = Analyze(pooled, opt.Options)
	}
	if err != nil {
		return nil, err
	}
	res.Tasks, res.Pool = map[string]*Result{}, p
	for _, t := range p.Tasks {
		res.Tasks[t] = results[t]
	}
	res.Notes = append(res.Notes, p.note())
	return res, nil
}

// emptyResult is the pooled audit of tasks whose grids share no config: the error records counted,
// nothing else.
func emptyResult(errs []record.Record, opt Options) (*Result, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	_, er := splitErrors(errs)
	res := &Result{ErrorRecords: er, Configs: []*dataset.Config{}, Categories: map[string]*Metrics{}, Durations: map[string]*Metrics{},
		Bootstrap: bootstrapInfo(opt), NoiseFloor: []NoiseFloor{}, IsoCompute: []IsoGroup{}, PipelineFlips: []PipelineFlip{},
		ProtocolAgreement: []ProtocolPair{}, Patterns: []Pattern{}, Transitions: []Transition{}, Warnings: []string{}, Notes: []string{},
		AccuracyHarness: map[string]*HarnessAccuracy{}}
	res.Metrics = Metrics{Accuracy: map[string]float64{}, Pairs: []Pair{}}
	res.DroppedItems = Dropped{MissingByConfig: map[string]int{}, Examples: []string{}}
	res.Unparsed = &Unparsed{ByConfig: map[string]int{}, Share: map[string]float64{}, AccuracyParsed: map[string]*float64{},
		Mostly: []string{}, Flows: []UnparsedFlow{}, Examples: []string{}}
	for _, k := range coreKeys {
		res.undefine(k, "no config is in every task's grid: nothing is pooled (see tasks)")
	}
	return res, nil
}

// analyzeModelsTasks audits several models' records of several tasks: each task on its own matched
// grid, then the pool; model_info counts every record of the input.
func analyzeModelsTasks(recs []record.Record, tasks []string, opt ModelsOptions) (*ModelsResult, error) {
	per, _ := byTask(recs)
	results := map[string]*ModelsResult{}
	grids, why := map[string][]string{}, map[string]string{}
	topt := opt
	topt.Task = ""
	all := Models(recs)
	for _, t := range tasks {
		// A task's matched grid is every model's: a model with no record of the task leaves it none.
		if missing := missingModels(all, per[t]); len(missing) > 0 {
			why[t] = fmt.Sprintf("model(s) %s have no record of this task (their records are of task(s) %s; one split under two names is one task only when imported under one name, import --task)",
				quoteList(missing), quoteList(tasksOf(recs, missing)))
			continue
		}
		r, err := modelsGrid(per[t], topt, nil)
		if err != nil {
			return nil, err
		}
		results[t] = r
		if r.Empty() {
			why[t] = whyModelsEmpty(per[t], opt)
			continue
		}
		grids[t] = r.MatchedGrid.Configs
	}
	p, in, err := newPool(tasks, grids, why, opt, recs)
	if err != nil {
		return nil, err
	}
	if len(p.Tasks) > 1 && len(p.Configs) == 0 {
		return nil, record.Errorf(dataset.SourcePaths(recs), 0, "audit", ErrNothingPaired, "%s", whyTasksApart(recs, p.Tasks))
	}
	var pooled []record.Record // in input order, so that the models keep theirs
	for i := range recs {
		if slices.Contains(p.Tasks, recs[i].Task) {
			pooled = append(pooled, recs[i])
		}
	}
	res, err := modelsGrid(pooled, topt, in)
	if err != nil {
		return nil, err
	}
	ms, err := SplitModels(recs)
	if err != nil {
		return nil, err
	}
	res.Models = res.Models[:0]
	for _, m := range ms { // every model and record of the input, the dropped tasks' too
		var ceil *int
		if c, ok := opt.Ceilings[m.Name]; ok {
			ceil = &c
		}
		res.Models = append(res.Models, m.Name)
		res.ModelInfo[m.Name] = modelInfo(m, ceil)
	}
	res.Tasks, res.Pool = map[string]*ModelsResult{}, p
	var rows []TableRow
	for _, m := range res.Models { // per model: the pooled rows, then each task's (split = the task)
		for _, row := range res.Table {
			if row.Model == m {
				rows = append(rows, row)
			}
		}
		for _, t := range p.Tasks {
			for _, row := range results[t].Table {
				if row.Model == m {
					row.Split = t
					rows = append(rows, row)
				}
			}
		}
	}
	if rows != nil {
		res.Table = rows
	}
	for _, t := range p.Tasks {
		res.Tasks[t] = results[t]
	}
	res.Notes = append(res.Notes, p.note())
	return res, nil
}
