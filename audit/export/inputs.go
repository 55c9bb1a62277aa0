package export

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/internal/portable"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

// Inputs are the records an audit reads and, when it is to be exported, their full rows (provenance
// and all) and where each came from.
type Inputs struct {
	Records []record.Record
	Full    []record.Full // nil unless read with provenance
	Sources []Source      // Full's inputs
	// Notes say which local names StripPaths cut (export.json "notes" and the datasheet carry them).
	Notes []string
}

// ReadInputs reads the audit's positionals: with provenance (Read) when full, for an export; else the
// canonical records alone (runs.ReadAll), which is what an audit holds in memory.
func ReadInputs(ctx context.Context, pos []string, full bool) (*Inputs, error) {
	in := &Inputs{}
	var err error
	if !full {
		in.Records, err = runs.ReadAll(ctx, pos)
		return in, err
	}
	if in.Full, in.Sources, err = Read(ctx, pos); err != nil {
		return nil, err
	}
	in.Records = make([]record.Record, len(in.Full))
	for i := range in.Full {
		in.Records[i] = in.Full[i].Record
		in.Records[i].VideoKey = in.Full[i].VideoIdentity()
	}
	return in, nil
}

// KeepModels keeps the records of the models named (all when none is); a name that no record
// carries is an error naming the inputs (from) and the models they hold (audit.CheckModels).
func (in *Inputs) KeepModels(models []string, from string) error {
	if len(models) == 0 {
		return nil
	}
	if err := audit.CheckModels(in.Records, models, from); err != nil {
		return err
	}
	in.keep(func(r *record.Record) bool { return slices.Contains(models, r.Model) })
	return nil
}

// KeepTask keeps the records of one task (`audit --task`), so that an export holds what was
// audited; a task no record is of is an error naming the inputs (from) and the tasks they hold.
func (in *Inputs) KeepTask(task, from string) error {
	tasks := audit.TaskNames(in.Records)
	if !slices.Contains(tasks, task) {
		q := make([]string, len(tasks))
		for i, t := range tasks {
			q[i] = fmt.Sprintf("%q", t)
		}
		return fmt.Errorf("%s: --task %q: no record is of that task (tasks: %s)", from, task, strings.Join(q, ", "))
	}
	in.keep(func(r *record.Record) bool { return r.Task == task })
	return nil
}

// keep keeps the records (and full rows, and their sources' ranges) that ok accepts.
func (in *Inputs) keep(ok func(*record.Record) bool) {
	if in.Full == nil {
		kept := in.Records[:0]
		for i := range in.Records {
			if ok(&in.Records[i]) {
				kept = append(kept, in.Records[i])
			}
		}
		in.Records = kept
		return
	}
	var rows []record.Full
	var srcs []Source
	for _, s := range in.Sources {
		start := len(rows)
		for i := s.Rows[0]; i < s.Rows[1]; i++ {
			if ok(&in.Full[i].Record) {
				rows = append(rows, in.Full[i])
			}
		}
		s.Rows = [2]int{start, len(rows)}
		srcs = append(srcs, s)
	}
	in.Full, in.Sources = rows, srcs
	in.Records = in.Records[:0]
	for i := range rows {
		in.Records = append(in.Records, rows[i].Record)
		in.Records[len(in.Records)-1].VideoKey = rows[i].VideoIdentity()
	}
}

// StripPaths takes this machine's absolute paths out of what the audit publishes (audit without
// --keep-paths), before the analysis, whose error examples are published too: the full rows and
// sources (StripPaths) and every error message the analysis quotes.
func (in *Inputs) StripPaths() {
	if in.Full != nil {
		in.Notes = append(in.Notes, StripPaths(in.Full, in.Sources)...)
	}
	for i := range in.Records {
		r := &in.Records[i]
		if r.Error != "" {
			r.Error = portable.Text(r.Error)
		}
		// The video as the export will name it, so that `audit EXPORT` groups the items alike.
		r.VideoKey = portable.Path(r.VideoKey)
	}
}

// WriteAudit writes the release of an audit to dir (`framesweep audit --export DIR`): every record of
// in (read with provenance), every model's trajectories as the audit counts them, the audit's JSON
// (js, as --json prints it) and the options that give it again.
func WriteAudit(dir string, in *Inputs, out *audit.Output, opt audit.ModelsOptions, js []byte) error {
	sets, err := audit.AllTrajectories(out.Records, opt)
	if err != nil {
		return err
	}
	_, err = Write(dir, Input{Rows: in.Full, Sources: in.Sources, Sets: sets, Audit: js, Options: RecordOptions(opt), Notes: in.Notes})
	return err
}
