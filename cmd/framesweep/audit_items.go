package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/report"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/runs"
)

// reportItems gives the HTML and Markdown reports what they name items with: every model's
// trajectories as the audit counts them (the export's), and the questions of the sweeps' items files.
func reportItems(ctx context.Context, ropt *report.Options, out *audit.Output, mopt audit.ModelsOptions, pos []string) error {
	sets, err := audit.AllTrajectories(out.Records, mopt)
	if err != nil {
		return err
	}
	ropt.Items, ropt.Questions = sets, runQuestions(ctx, pos)
	return nil
}

// runQuestions maps (task, item id) to the question of every local RUN among pos whose items file
// (run.json's) is still there with the content the sweep read; nil when none is. The questions only
// label the reports' item lists: a RUN whose items file moved or changed gives none, and no error.
func runQuestions(ctx context.Context, pos []string) map[string]string {
	var q map[string]string
	for _, p := range pos {
		if _, err := os.Stat(filepath.Join(p, "run.json")); err != nil {
			continue
		}
		rr, err := runs.Open(ctx, p)
		if err != nil {
			continue
		}
		info, err := rr.Info(ctx)
		rr.Close()
		if err != nil || info.Items.Path == "" {
			continue
		}
		f, err := items.Read(info.Items.Path)
		if err != nil || f.SHA256 != info.Items.SHA256 {
			continue
		}
		if q == nil {
			q = map[string]string{}
		}
		for _, it := range f.Items {
			q[report.QuestionKey(it.Task, it.ItemID)] = it.Question
		}
	}
	return q
}
