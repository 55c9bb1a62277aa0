package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/framesweep/framesweep/record"
)

// Output is what `framesweep audit` computes: one model's audit or several models', and the records
// it audited.
type Output struct {
	Single  *Result       // one model (nil when Multi is set)
	Multi   *ModelsResult // several models
	Records []record.Record
}

// Warnings are the audit's warnings (every model's, each naming its model).
func (o *Output) Warnings() []string {
	if o.Multi != nil {
		return o.Multi.Warnings
	}
	return o.Single.Warnings
}

// Value is the audit as `framesweep audit --json` prints it: a Result or a ModelsResult.
func (o *Output) Value() any {
	if o.Multi != nil {
		return o.Multi
	}
	return o.Single
}

// AnalyzeAll audits the records of one model (Analyze; a ceiling given for it leaves its configs
// beyond the ceiling out, with a note) or of several (AnalyzeModels), and refuses an audit of nothing
// with an error naming why (CheckNotEmpty: ids that never meet, the model that empties the matched
// grid). Output.Records are the records audited.
func AnalyzeAll(recs []record.Record, opt ModelsOptions) (*Output, error) {
	recs, err := selectTask(recs, opt.Task)
	if err != nil {
		return nil, err
	}
	opt.Task = ""
	models := Models(recs)
	out := &Output{Records: recs}
	if len(models) > 1 {
		out.Multi, err = AnalyzeModels(recs, opt)
	} else {
		out.Single, out.Records, err = analyzeOne(recs, models[0], opt)
	}
	if err != nil {
		return nil, err
	}
	if err := CheckNotEmpty(out.Single, out.Multi, out.Records, opt); err != nil {
		return nil, err
	}
	return out, nil
}

// analyzeOne audits one model's records, leaving out the configs beyond a ceiling given for it.
func analyzeOne(recs []record.Record, model string, opt ModelsOptions) (*Result, []record.Record, error) {
	var note string
	for m, c := range opt.Ceilings {
		if m != model {
			return nil, nil, fmt.Errorf("--ceiling names model %q; the records hold only %q", m, model)
		}
		kept, dropped, err := DropOverCeiling(recs, c)
		if err != nil {
			return nil, nil, err
		}
		recs = kept
		if len(dropped) > 0 {
			note = fmt.Sprintf("configs %s are beyond the %d-frame ceiling given for model %q (--ceiling) and left out", strings.Join(dropped, ", "), c, m)
		}
	}
	var res *Result
	var err error
	if tasks := TaskNames(recs); len(tasks) > 1 {
		res, err = analyzeOneTasks(recs, tasks, opt)
	} else {
		res, err = Analyze(recs, opt.Options)
	}
	if err != nil {
		return nil, nil, err
	}
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	return res, recs, nil
}

// CheckModels reports a model name that no record carries, naming the inputs (from) and the models
// the records name; nil when every name is found.
func CheckModels(recs []record.Record, models []string, from string) error {
	have := Models(recs)
	for _, m := range models {
		if !slices.Contains(have, m) {
			return fmt.Errorf("%s: no record names model %q (the records name %q)", from, m, have)
		}
	}
	return nil
}
