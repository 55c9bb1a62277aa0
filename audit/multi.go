package audit

import (
	"fmt"
	"strings"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/record"
)

// ModelsOptions steer AnalyzeModels.
type ModelsOptions struct {
	Options
	// Ceilings are frame ceilings by model (--ceiling MODEL=FRAMES): a config with more frames is
	// beyond that model's context ceiling.
	Ceilings map[string]int
	// Task audits only the records of this task (--task; "" for all). Records of several tasks are
	// audited per task, each on its own grid, and pooled (tasks.go).
	Task string
	// AllowDrop lets a pooled audit go on without a task that has no grid at all (--allow-drop);
	// otherwise such a task is an error naming it.
	AllowDrop bool
}

// ModelsResult is the audit of several models (`framesweep audit --json` when the records name more
// than one): the matched grid, every model's audit over it side by side, the paper's table per split
// and duration group, and the cross-model structure of the item labels.
type ModelsResult struct {
	Models      []string              `json:"models"`
	ModelInfo   map[string]*ModelInfo `json:"model_info"`
	MatchedGrid *MatchedGrid          `json:"matched_grid"`
	// PerModel is each model's full audit (Result) over the matched grid and the matched items.
	PerModel map[string]*Result `json:"per_model"`
	// Accuracy is config → model → accuracy (points) over the matched grid.
	Accuracy map[string]map[string]float64 `json:"accuracy"`
	// Table is the study's table: per model, split (the records' task; "all" pools them) and
	// duration group ("all" for every duration), the core metrics.
	Table []TableRow `json:"table"`
	// Churn is every adjacent transition of the matched grid with each model's flows.
	Churn      []ChurnRow  `json:"churn"`
	CrossModel *CrossModel `json:"cross_model"`
	// Warnings are every model's warnings (Result.Warnings), each naming its model.
	Warnings []string `json:"warnings"`
	Notes    []string `json:"notes"`
	// Tasks is every task's own audit on its own matched grid, when the records are of several
	// tasks; Pool says how the audit above pooled them (tasks.go).
	Tasks map[string]*ModelsResult `json:"tasks,omitempty"`
	Pool  *Pool                    `json:"pool,omitempty"`
}

// AnalyzeModels audits the records of several models (SplitModels) on their matched grid; records of
// several tasks per task, each task on its own matched grid, and pooled (analyzeTasks).
func AnalyzeModels(recs []record.Record, opt ModelsOptions) (*ModelsResult, error) {
	recs, err := selectTask(recs, opt.Task)
	if err != nil {
		return nil, err
	}
	if tasks := TaskNames(recs); len(tasks) > 1 {
		return analyzeModelsTasks(recs, tasks, opt)
	}
	return modelsGrid(recs, opt, nil)
}

// modelsGrid audits the records of several models on one matched grid, of the configs in pool (nil:
// every config).
func modelsGrid(recs []record.Record, opt ModelsOptions, pool map[string]bool) (*ModelsResult, error) {
	ms, err := SplitModels(recs)
	if err != nil {
		return nil, err
	}
	for m := range opt.Ceilings {
		if !containsModel(ms, m) {
			return nil, record.Errorf(dataset.SourcePaths(recs), 0, "models", ErrBadArgs, "--ceiling names model %q, which no record names (models: %s)", m, modelNames(ms))
		}
	}
	mg, filtered, err := matchGrid(ms, opt.Ceilings, pool)
	if err != nil {
		return nil, err
	}
	res := &ModelsResult{ModelInfo: map[string]*ModelInfo{}, MatchedGrid: mg, PerModel: map[string]*Result{},
		Accuracy: map[string]map[string]float64{}, Table: []TableRow{}, Churn: []ChurnRow{}, Warnings: []string{}, Notes: []string{}}
	for _, m := range ms {
		res.Models = append(res.Models, m.Name)
		var ceil *int
		if c, ok := opt.Ceilings[m.Name]; ok {
			ceil = &c
		}
		res.ModelInfo[m.Name] = modelInfo(m, ceil)
	}
	if len(mg.Configs) == 0 || mg.Items == 0 {
		res.Notes = append(res.Notes, "the models share no config with an item every model answered: nothing to compare")
		return res, nil
	}
	for _, m := range ms {
		// The model's audit counts its own error records (all of them, as model_info does): they are
		// left out of every metric, but a failure must never pass for nothing.
		r, err := Analyze(append(filtered[m.Name][:len(filtered[m.Name]):len(filtered[m.Name])], errorRecords(m.Records)...), opt.Options)
		if err != nil {
			return nil, err
		}
		res.PerModel[m.Name] = r
		for _, w := range r.Warnings {
			res.Warnings = append(res.Warnings, fmt.Sprintf("model %q: %s", m.Name, w))
		}
		for c, a := range r.Accuracy {
			if res.Accuracy[c] == nil {
				res.Accuracy[c] = map[string]float64{}
			}
			res.Accuracy[c][m.Name] = a
		}
		res.Table = append(res.Table, resultRows(m.Name, "all", r)...)
	}
	res.Churn = churnRows(res)
	if res.CrossModel, err = crossModel(res.Models, filtered, opt.DefaultPolicy); err != nil {
		return nil, err
	}
	if len(mg.Differs) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d matched config(s) have config_meta that differs between models (compared by id): %s", len(mg.Differs), strings.Join(mg.Differs, "; ")))
	}
	if mg.Dropped > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d of %d items lack an answer of some model in some matched config and are left out of every model's audit (examples: %s)",
			mg.Dropped, mg.TotalItems, strings.Join(mg.Examples, ", ")))
	}
	return res, nil
}

// errorRecords are the error records of recs, in order.
func errorRecords(recs []record.Record) []record.Record {
	var out []record.Record
	for i := range recs {
		if recs[i].Failed() {
			out = append(out, recs[i])
		}
	}
	return out
}

func containsModel(ms []ModelRecords, name string) bool {
	for _, m := range ms {
		if m.Name == name {
			return true
		}
	}
	return false
}

func modelNames(ms []ModelRecords) string {
	var s []string
	for _, m := range ms {
		s = append(s, fmt.Sprintf("%q", m.Name))
	}
	return strings.Join(s, ", ")
}
