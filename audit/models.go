package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/record"
)

// ModelRecords are the records of one model.
type ModelRecords struct {
	Name    string
	Records []record.Record
}

// Models lists the distinct model names of the records ("" for records that name none), in
// first-seen order.
func Models(recs []record.Record) []string {
	var out []string
	seen := map[string]bool{}
	for i := range recs {
		if m := recs[i].Model; !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// SplitModels groups the records by model, in first-seen order. Records that name no model are one
// model when no record names one; beside named records they are an error naming their files (which
// model answered them is unknown: `framesweep ingest --model` names it). One model name with two
// weights digests is an error naming both files: two sets of weights are two models.
func SplitModels(recs []record.Record) ([]ModelRecords, error) {
	names := Models(recs)
	if len(names) > 1 && containsString(names, "") {
		var named []string
		for _, n := range names {
			if n != "" {
				named = append(named, fmt.Sprintf("%q", n))
			}
		}
		var files []record.Record
		for i := range recs {
			if recs[i].Model == "" {
				files = append(files, recs[i])
			}
		}
		return nil, record.Errorf(dataset.SourcePaths(files), 0, "models", record.ErrInvalid,
			"these records name no model while others name %s: name every record's model (framesweep ingest --model NAME)", strings.Join(named, ", "))
	}
	idx := map[string]int{}
	out := make([]ModelRecords, len(names))
	for i, n := range names {
		idx[n] = i
		out[i].Name = n
	}
	for i := range recs {
		k := idx[recs[i].Model]
		out[k].Records = append(out[k].Records, recs[i])
	}
	for _, m := range out {
		if err := checkWeights(m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkWeights refuses a model whose records carry two weights digests.
func checkWeights(m ModelRecords) error {
	first := -1
	for i := range m.Records {
		r := &m.Records[i]
		if r.WeightsSHA256 == "" {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		if f := &m.Records[first]; r.WeightsSHA256 != f.WeightsSHA256 {
			return record.Errorf(r.Source.Path, r.Source.Line, "models", record.ErrConflict,
				"model %q: weights_sha256 %.12s… here but %.12s… at %s:%d: two sets of weights under one name (rename one with import --model, or sweep it under another model file name)",
				m.Name, r.WeightsSHA256, f.WeightsSHA256, f.Source.Path, f.Source.Line)
		}
	}
	return nil
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// ModelInfo describes one model of a multi-model audit.
type ModelInfo struct {
	Records       int    `json:"records"`       // answered records
	ErrorRecords  int    `json:"error_records"` // pairs the sweep could not answer
	WeightsSHA256 string `json:"weights_sha256,omitempty"`
	ContextTokens *int   `json:"context_tokens"` // the runtime's context size, when the records say
	// Ceiling is the frame ceiling given with --ceiling (null: none given).
	Ceiling *int `json:"ceiling"`
	// OverContext lists the configs whose prompts the runtime refused as longer than its context.
	OverContext []string `json:"over_context"`
	Configs     []string `json:"configs"` // configs the model answered, display order
}

// modelInfo summarises one model's records.
func modelInfo(m ModelRecords, ceiling *int) *ModelInfo {
	mi := &ModelInfo{Ceiling: ceiling, OverContext: []string{}, Configs: []string{}}
	over := map[string]bool{}
	answered := map[string]bool{}
	for i := range m.Records {
		r := &m.Records[i]
		if r.WeightsSHA256 != "" {
			mi.WeightsSHA256 = r.WeightsSHA256
		}
		if r.ContextTokens != nil && (mi.ContextTokens == nil || *r.ContextTokens > *mi.ContextTokens) {
			n := *r.ContextTokens
			mi.ContextTokens = &n
		}
		switch {
		case !r.Failed():
			mi.Records++
			answered[r.Config] = true
		case r.OverContext:
			mi.ErrorRecords++
			over[r.Config] = true
		default:
			mi.ErrorRecords++
		}
	}
	for c := range over {
		mi.OverContext = append(mi.OverContext, c)
	}
	for c := range answered {
		mi.Configs = append(mi.Configs, c)
	}
	sort.Strings(mi.OverContext)
	sort.Strings(mi.Configs)
	return mi
}
