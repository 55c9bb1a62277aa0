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
}

// AnalyzeModels audits the records of several models (SplitModels) on their matched grid.
func AnalyzeModels(recs []record.Record, opt ModelsOptions) (*ModelsResult, error) {
	ms, err := SplitModels(recs)
	if err != nil {
		return nil, err
	}
	for m := range opt.Ceilings {
		if !containsModel(ms, m) {
			return nil, record.Errorf(dataset.SourcePaths(recs), 0, "models", ErrBadArgs, "--ceiling names model %q, which no record names (models: %s)", m, modelNames(ms))
		}
	}
	mg, filtered, err := matchGrid(ms, opt.Ceilings)
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
		r, err := Analyze(filtered[m.Name], opt.Options)
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
		rows, err := tableRows(m.Name, filtered[m.Name], r, opt.Options)
		if err != nil {
			return nil, err
		}
		res.Table = append(res.Table, rows...)
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
