package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/export"
	"github.com/framesweep/framesweep/audit/report"
	"github.com/framesweep/framesweep/internal/atomicfile"
	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/runs"
	"github.com/framesweep/framesweep/sampler"
)

// analysisFlags are shared by audit and cascade.
type analysisFlags struct {
	seed          uint64
	folds         int
	ladder        string
	policy        string
	size          string
	reference     int
	defaultPolicy string
}

func (a *analysisFlags) register(fs *flag.FlagSet) {
	fs.Uint64Var(&a.seed, "bootstrap-seed", 1, bootstrapSeedHelp)
	deprecate(fs, "seed", "--bootstrap-seed", "bootstrap-seed")
	fs.IntVar(&a.folds, "folds", 0, "cascade: choose τ on K−1 folds and score the held-out fold (K ≥ 2)")
	fs.StringVar(&a.ladder, "cascade", "", "the cascade's ladder of frame budgets, e.g. 16,32,64,128 (default: the longest chain found)")
	deprecate(fs, "budgets", "--cascade", "cascade")
	fs.StringVar(&a.policy, "cascade-policy", "", "cascade: only configs of this sampling policy")
	deprecate(fs, "policy", "--cascade-policy", "cascade-policy")
	fs.StringVar(&a.size, "cascade-size", "", "cascade: only configs of this size, WxH")
	deprecate(fs, "size", "--cascade-size", "cascade-size")
	fs.IntVar(&a.reference, "reference", 0, "cascade: frames of the reference fixed budget (default: the largest)")
	fs.StringVar(&a.defaultPolicy, "default-policy", "uniform", "sampling policy of the main grid (terminal ties, sampling recovery)")
}

// options turns the flags into audit options; a non-empty string is a usage error.
func (a *analysisFlags) options() (audit.Options, string) {
	opt := audit.DefaultOptions()
	opt.Seed, opt.DefaultPolicy = a.seed, a.defaultPolicy
	opt.Cascade.Folds, opt.Cascade.Policy, opt.Cascade.Reference = a.folds, a.policy, a.reference
	if a.ladder != "" {
		b, err := sampler.ParseLadder(a.ladder)
		if err != nil {
			return opt, "--cascade " + err.Error()
		}
		opt.Cascade.Budgets = b
	}
	if a.size != "" {
		wi, hi, err := geom.ParseWxH(a.size)
		if err != nil {
			return opt, fmt.Sprintf("--cascade-size %q is not WxH", a.size)
		}
		opt.Cascade.Width, opt.Cascade.Height = wi, hi
	}
	return opt, ""
}

// auditFlags are audit's own flags beyond the analysis flags.
type auditFlags struct {
	asJSON                  *bool
	mdPath, htmlPath, title *string
	resamples               *int
	epsilon                 *float64
	ceilings                ceilingFlag
	model, export           *string
	models                  listFlag
	keepPaths               *bool
	task                    *string
	allowDrop               *bool
	cluster                 *string
}

// ceilingFlag collects --ceiling MODEL=FRAMES (repeatable).
type ceilingFlag map[string]int

func (c ceilingFlag) String() string { return "" }

func (c ceilingFlag) Set(v string) error {
	i := strings.LastIndex(v, "=")
	if i <= 0 {
		return fmt.Errorf("want MODEL=FRAMES, got %q", v)
	}
	n, err := num.In(1, sampler.MaxBudget).ParseInt("FRAMES", v[i+1:])
	if err != nil {
		return fmt.Errorf("%q: %v", v, err)
	}
	if _, dup := c[v[:i]]; dup {
		return fmt.Errorf("model %q given twice", v[:i])
	}
	c[v[:i]] = int(n)
	return nil
}

func runAudit(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("audit", stderr)
	var af analysisFlags
	af.register(fs)
	f := auditFlags{
		asJSON:    fs.Bool("json", false, "print the audit as one JSON object (METRICS.md \"Output\")"),
		mdPath:    fs.String("md", "", "also write a Markdown report to FILE"),
		htmlPath:  fs.String("html", "", "also write the self-contained HTML report to FILE"),
		title:     fs.String("title", "framesweep audit", "report title"),
		resamples: fs.Int("resamples", 1000, "bootstrap resamples (0: no intervals)"),
		epsilon:   fs.Float64("epsilon", 0.05, "open-ended regression margin on the 0–1 score scale"),
		ceilings:  ceilingFlag{},
		model:     fs.String("model", "", "audit the records of this model only"),
		export:    fs.String("export", "", "also write the release (records, trajectories and tags, provenance, datasheet) to DIR"),
		keepPaths: fs.Bool("keep-paths", false, "keep this machine's absolute paths (videos, model files, inputs, error messages) in --export, --html, --md and --json; by default they are cut to file names"),
		task:      fs.String("task", "", "audit the records of this task (split) only; records of several tasks are audited per task and pooled"),
		allowDrop: fs.Bool("allow-drop", false, "a pooled audit of several tasks goes on without a task that has no grid at all (named in pool.dropped_tasks) instead of failing"),
		cluster:   fs.String("cluster", audit.ClusterAuto, "bootstrap resampling unit: auto (videos when items share one), item, video (the records' video), video-id (Video-MME's NNN-k ids: question k of video NNN)"),
	}
	fs.Var(f.ceilings, "ceiling", "MODEL=FRAMES: configs with more frames are beyond that model's context ceiling (repeatable)")
	fs.Var(&f.models, "models", "A,B,…: audit the records of these models only (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep audit RECORDS.jsonl|RUN_DIR|EXPORT_DIR... [--json] [--md FILE] [--html FILE] [--bootstrap-seed S] [--cascade 16,32,...] [--folds K]\n"+
			"       [--ceiling MODEL=FRAMES]... [--model NAME | --models A,B,...] [--task SPLIT] [--allow-drop] [--cluster auto|item|video|video-id]\n"+
			"       [--export DIR] [--keep-paths]")
		printFlags(fs)
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) == 0 {
		return usageErr(stderr, "audit", "need at least one records file or run directory")
	}
	if bad, err := adoptManifest(fs, pos); err != nil {
		return failErr(stderr, "audit", err)
	} else if bad != "" {
		return usageErr(stderr, "audit", "%s", bad)
	}
	opt, bad := af.options()
	if bad != "" {
		return usageErr(stderr, "audit", "%s", bad)
	}
	opt.Resamples, opt.Epsilon, opt.Cluster = *f.resamples, *f.epsilon, *f.cluster
	if !slices.Contains(audit.Clusters, opt.Cluster) {
		return usageErr(stderr, "audit", "--cluster %q: want one of %s", opt.Cluster, strings.Join(audit.Clusters, ", "))
	}
	mopt := audit.ModelsOptions{Options: opt, Ceilings: map[string]int(f.ceilings), AllowDrop: *f.allowDrop}
	if len(mopt.Ceilings) == 0 {
		mopt.Ceilings = nil
	}
	models := []string(f.models)
	switch {
	case *f.model != "" && len(models) > 0:
		return usageErr(stderr, "audit", "--model and --models exclude each other (--models takes one name too)")
	case *f.model != "":
		models = []string{*f.model}
	}
	in, err := export.ReadInputs(context.Background(), pos, *f.export != "")
	if err == nil {
		err = in.KeepModels(models, strings.Join(pos, ","))
	}
	if err == nil && *f.task != "" {
		err = in.KeepTask(*f.task, strings.Join(pos, ","))
	}
	if err != nil {
		return failErr(stderr, "audit", err)
	}
	for _, n := range runs.Notes(context.Background(), pos) { // chunks of older RUNs carry no digest
		fmt.Fprintf(stderr, "framesweep audit: note: %s\n", n)
	}
	if !*f.keepPaths {
		in.StripPaths() // before the analysis: its error examples are published too
	}
	out, err := audit.AnalyzeAll(in.Records, mopt)
	if err != nil {
		return failErr(stderr, "audit", err)
	}
	return printAudit(in, out, mopt, f, pos, stdout, stderr)
}

// printAudit writes the reports (--html, --md), the release (--export) and the audit on stdout: its
// JSON (--json) or the text summary.
func printAudit(in *export.Inputs, out *audit.Output, mopt audit.ModelsOptions, f auditFlags, pos []string, stdout, stderr io.Writer) int {
	ropt := report.Options{Title: *f.title, Sources: report.SourceNames(pos, *f.keepPaths)}
	if *f.htmlPath != "" || *f.mdPath != "" {
		if err := reportItems(context.Background(), &ropt, out, mopt, pos); err != nil {
			return failErr(stderr, "audit", err)
		}
	}
	for _, o := range []struct {
		path   string
		format report.Format
	}{{*f.htmlPath, report.FormatHTML}, {*f.mdPath, report.FormatMarkdown}} {
		if o.path == "" {
			continue
		}
		var buf bytes.Buffer
		if err := report.Write(&buf, out, o.format, ropt); err != nil {
			return failErr(stderr, "audit", fmt.Errorf("%s: %w", o.path, err))
		}
		if err := writeReport(o.path, buf.Bytes()); err != nil {
			return failErr(stderr, "audit", err)
		}
	}
	if *f.asJSON { // the summary on stdout shows them otherwise
		for _, w := range out.Warnings() {
			fmt.Fprintf(stderr, "framesweep audit: warning: %s\n", w)
		}
	}
	var js bytes.Buffer
	if err := writeJSON(&js, out.Value()); err != nil {
		return failErr(stderr, "audit", err)
	}
	if *f.export != "" {
		if err := export.WriteAudit(*f.export, in, out, mopt, js.Bytes()); err != nil {
			return failErr(stderr, "audit", err)
		}
		for _, n := range in.Notes {
			fmt.Fprintf(stderr, "framesweep audit: note: %s\n", n)
		}
	}
	if !*f.asJSON {
		_ = report.Write(stdout, out, report.FormatText, ropt) // text: no error to report
		return exitOK
	}
	if _, err := stdout.Write(js.Bytes()); err != nil {
		return failErr(stderr, "audit", err)
	}
	return exitOK
}

// adoptManifest gives an export's recorded options (export.Recorded) to the flags not set on the
// command line, so that `framesweep audit EXPORT_DIR` gives the audit the export holds; "" or a usage
// error, or the error of an export that is not what its manifest records.
func adoptManifest(fs *flag.FlagSet, pos []string) (string, error) {
	rec, from, err := export.Recorded(pos)
	var differ *export.OptionsDifferError
	switch {
	case errors.As(err, &differ):
		return err.Error(), nil
	case err != nil || rec == nil:
		return "", err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, vs := range rec.Flags() {
		if set[name] {
			continue
		}
		for _, v := range vs {
			if err := setFlag(fs, name, v); err != nil {
				return fmt.Sprintf("%s: --%s %s: %v", from, name, v, err), nil
			}
		}
	}
	return "", nil
}

// writeReport writes a report file whole or not at all (a reader never sees half of it, and a
// failed write leaves the previous report), readable by others.
func writeReport(path string, b []byte) error {
	if err := atomicfile.WritePerm(path, b, 0o644); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
