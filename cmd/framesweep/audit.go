package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/cascade"
	"github.com/framesweep/framesweep/audit/export"
	"github.com/framesweep/framesweep/audit/report"
	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/runs"
	"github.com/framesweep/framesweep/sampler"
)

// analysisFlags are shared by audit and cascade.
type analysisFlags struct {
	seed          uint64
	folds         int
	budgets       string
	policy        string
	size          string
	reference     int
	defaultPolicy string
}

func (a *analysisFlags) register(fs *flag.FlagSet) {
	fs.Uint64Var(&a.seed, "seed", 1, "seed of the bootstrap resamples and the cascade folds (SplitMix64)")
	fs.IntVar(&a.folds, "folds", 0, "cascade: choose τ on K−1 folds and score the held-out fold (K ≥ 2)")
	fs.StringVar(&a.budgets, "budgets", "", "cascade budgets as frame counts, e.g. 16,32,64,128 (default: the longest chain found)")
	fs.StringVar(&a.policy, "policy", "", "cascade: only configs of this sampling policy")
	fs.StringVar(&a.size, "size", "", "cascade: only configs of this size, WxH")
	fs.IntVar(&a.reference, "reference", 0, "cascade: frames of the reference fixed budget (default: the largest)")
	fs.StringVar(&a.defaultPolicy, "default-policy", "uniform", "sampling policy of the main grid (terminal ties, sampling recovery)")
}

// options turns the flags into audit options; a non-empty string is a usage error.
func (a *analysisFlags) options() (audit.Options, string) {
	opt := audit.DefaultOptions()
	opt.Seed, opt.DefaultPolicy = a.seed, a.defaultPolicy
	opt.Cascade.Folds, opt.Cascade.Policy, opt.Cascade.Reference = a.folds, a.policy, a.reference
	if a.budgets != "" {
		for _, f := range strings.Split(a.budgets, ",") {
			n, err := num.In(1, sampler.MaxBudget).ParseInt("--budgets", f)
			if err != nil {
				return opt, err.Error()
			}
			opt.Cascade.Budgets = append(opt.Cascade.Budgets, int(n))
		}
		for i := 1; i < len(opt.Cascade.Budgets); i++ {
			if opt.Cascade.Budgets[i] <= opt.Cascade.Budgets[i-1] {
				return opt, "--budgets must increase"
			}
		}
	}
	if a.size != "" {
		wi, hi, err := geom.ParseWxH(a.size)
		if err != nil {
			return opt, fmt.Sprintf("--size %q is not WxH", a.size)
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
	}
	fs.Var(f.ceilings, "ceiling", "MODEL=FRAMES: configs with more frames are beyond that model's context ceiling (repeatable)")
	fs.Var(&f.models, "models", "A,B,…: audit the records of these models only (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep audit RECORDS.jsonl|RUN_DIR|EXPORT_DIR... [--json] [--md FILE] [--html FILE] [--seed S] [--budgets 16,32,...] [--folds K]\n"+
			"       [--ceiling MODEL=FRAMES]... [--model NAME | --models A,B,...] [--export DIR] [--keep-paths]")
		fs.PrintDefaults()
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
	opt.Resamples, opt.Epsilon = *f.resamples, *f.epsilon
	mopt := audit.ModelsOptions{Options: opt, Ceilings: map[string]int(f.ceilings)}
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
	in, err := readAuditInputs(pos, *f.export != "", models)
	if err != nil {
		return failErr(stderr, "audit", err)
	}
	if !*f.keepPaths {
		in.stripPaths() // before the analysis: its error examples are published too
	}
	out, err := analyzeInputs(in, mopt)
	if err != nil {
		return failErr(stderr, "audit", err)
	}
	// An audit of nothing is an error naming why (ids that never meet, the model that empties the
	// matched grid), not an empty report.
	if err := audit.CheckNotEmpty(out.single, out.multi, out.recs, mopt); err != nil {
		return failErr(stderr, "audit", err)
	}
	if err := writeReports(out, f, pos); err != nil {
		return failErr(stderr, "audit", err)
	}
	if *f.asJSON { // the summary on stdout shows them otherwise
		for _, w := range out.warnings() {
			fmt.Fprintf(stderr, "framesweep audit: warning: %s\n", w)
		}
	}
	var js bytes.Buffer
	if err := writeJSON(&js, out.value()); err != nil {
		return failErr(stderr, "audit", err)
	}
	if *f.export != "" {
		if err := exportAudit(*f.export, in, out, mopt, js.Bytes()); err != nil {
			return failErr(stderr, "audit", err)
		}
	}
	if *f.asJSON {
		if _, err := stdout.Write(js.Bytes()); err != nil {
			return failErr(stderr, "audit", err)
		}
		return exitOK
	}
	if out.multi != nil {
		printModelsSummary(stdout, out.multi)
	} else {
		printSummary(stdout, out.single)
	}
	return exitOK
}

// auditInputs are the records an audit reads: with --export, full records (provenance and all) and
// where each came from.
type auditInputs struct {
	recs    []record.Record
	full    []record.Full
	sources []export.Source
}

// readAuditInputs reads the positionals (with provenance when exporting) and keeps the records of
// the models named (all when none is).
func readAuditInputs(pos []string, full bool, models []string) (*auditInputs, error) {
	in := &auditInputs{}
	var err error
	if full {
		if in.full, in.sources, err = export.Read(context.Background(), pos); err != nil {
			return nil, err
		}
		in.recs = make([]record.Record, len(in.full))
		for i := range in.full {
			in.recs[i] = in.full[i].Record
		}
	} else if in.recs, err = runs.ReadAll(context.Background(), pos); err != nil {
		return nil, err
	}
	if len(models) == 0 {
		return in, nil
	}
	have := audit.Models(in.recs)
	for _, m := range models {
		if !slices.Contains(have, m) {
			return nil, fmt.Errorf("%s: no record names model %q (the records name %q)", strings.Join(pos, ","), m, have)
		}
	}
	keep := func(r *record.Record) bool { return slices.Contains(models, r.Model) }
	if full {
		var rows []record.Full
		var srcs []export.Source
		for _, s := range in.sources {
			start := len(rows)
			for i := s.Rows[0]; i < s.Rows[1]; i++ {
				if keep(&in.full[i].Record) {
					rows = append(rows, in.full[i])
				}
			}
			s.Rows = [2]int{start, len(rows)}
			srcs = append(srcs, s)
		}
		in.full, in.sources = rows, srcs
		in.recs = in.recs[:0]
		for i := range rows {
			in.recs = append(in.recs, rows[i].Record)
		}
	} else {
		kept := in.recs[:0]
		for i := range in.recs {
			if keep(&in.recs[i]) {
				kept = append(kept, in.recs[i])
			}
		}
		in.recs = kept
	}
	return in, nil
}

// auditOutput is one model's audit or several models'.
type auditOutput struct {
	single *audit.Result
	multi  *audit.ModelsResult
	recs   []record.Record // the records audited (a one-model --ceiling leaves configs out)
}

// warnings are the audit's warnings (every model's, each naming its model).
func (o *auditOutput) warnings() []string {
	if o.multi != nil {
		return o.multi.Warnings
	}
	return o.single.Warnings
}

func (o *auditOutput) value() any {
	if o.multi != nil {
		return o.multi
	}
	return o.single
}

// analyzeInputs audits one model (Analyze; --ceiling leaves its configs beyond the ceiling out, with
// a note) or several (AnalyzeModels).
func analyzeInputs(in *auditInputs, opt audit.ModelsOptions) (*auditOutput, error) {
	models := audit.Models(in.recs)
	out := &auditOutput{recs: in.recs}
	if len(models) > 1 {
		var err error
		out.multi, err = audit.AnalyzeModels(in.recs, opt)
		return out, err
	}
	var note string
	for m, c := range opt.Ceilings {
		if m != models[0] {
			return nil, fmt.Errorf("--ceiling names model %q; the records hold only %q", m, models[0])
		}
		kept, dropped, err := audit.DropOverCeiling(in.recs, c)
		if err != nil {
			return nil, err
		}
		out.recs = kept
		if len(dropped) > 0 {
			note = fmt.Sprintf("configs %s are beyond the %d-frame ceiling given for model %q (--ceiling) and left out", strings.Join(dropped, ", "), c, m)
		}
	}
	res, err := audit.Analyze(out.recs, opt.Options)
	if err != nil {
		return nil, err
	}
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	out.single = res
	return out, nil
}

// writeReports writes --html and --md.
func writeReports(out *auditOutput, f auditFlags, pos []string) error {
	ropt := report.Options{Title: *f.title, Sources: reportSources(pos, *f.keepPaths)}
	for _, o := range []struct {
		path   string
		single func(io.Writer, *audit.Result, report.Options) error
		multi  func(io.Writer, *audit.ModelsResult, report.Options) error
	}{{*f.htmlPath, report.HTML, report.ModelsHTML}, {*f.mdPath, report.Markdown, report.ModelsMarkdown}} {
		if o.path == "" {
			continue
		}
		var buf bytes.Buffer
		var err error
		if out.multi != nil {
			err = o.multi(&buf, out.multi, ropt)
		} else {
			err = o.single(&buf, out.single, ropt)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", o.path, err)
		}
		if err := os.WriteFile(o.path, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// exportAudit writes --export DIR: every record, every model's trajectories as the audit counts
// them, the audit's JSON and the options that give it again.
func exportAudit(dir string, in *auditInputs, out *auditOutput, opt audit.ModelsOptions, js []byte) error {
	sets, err := audit.AllTrajectories(out.recs, opt)
	if err != nil {
		return err
	}
	_, err = export.Write(dir, export.Input{Rows: in.full, Sources: in.sources, Sets: sets, Audit: js, Options: export.RecordOptions(opt)})
	return err
}

// adoptManifest gives an export's recorded options to the flags not set on the command line, so that
// `framesweep audit EXPORT_DIR` gives the audit the export holds; "" or a usage error, or the error of
// an export that is not what its manifest records (export.LoadManifest verifies it).
func adoptManifest(fs *flag.FlagSet, pos []string) (string, error) {
	var m *export.Manifest
	from := ""
	for _, p := range pos {
		got, ok, err := export.LoadManifest(p)
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		if m != nil && !reflect.DeepEqual(m.Audit, got.Audit) {
			return fmt.Sprintf("exports %s and %s were audited with different options; give the options explicitly", from, p), nil
		}
		m, from = got, p
	}
	if m == nil {
		return "", nil
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	a := m.Audit
	vals := map[string][]string{
		"seed": {strconv.FormatUint(a.Seed, 10)}, "resamples": {strconv.Itoa(a.Resamples)},
		"epsilon": {strconv.FormatFloat(a.Epsilon, 'g', -1, 64)}, "default-policy": {a.DefaultPolicy},
	}
	if len(a.Budgets) > 0 {
		var b []string
		for _, n := range a.Budgets {
			b = append(b, strconv.Itoa(n))
		}
		vals["budgets"] = []string{strings.Join(b, ",")}
	}
	for k, v := range map[string]int{"reference": a.Reference, "folds": a.Folds} {
		if v != 0 {
			vals[k] = []string{strconv.Itoa(v)}
		}
	}
	if a.Policy != "" {
		vals["policy"] = []string{a.Policy}
	}
	if a.Width > 0 {
		vals["size"] = []string{fmt.Sprintf("%dx%d", a.Width, a.Height)}
	}
	for mdl, c := range a.Ceilings {
		vals["ceiling"] = append(vals["ceiling"], fmt.Sprintf("%s=%d", mdl, c))
	}
	for name, vs := range vals {
		if set[name] {
			continue
		}
		for _, v := range vs {
			if err := setFlag(fs, name, v); err != nil {
				return fmt.Sprintf("%s: --%s %s: %v", filepath.Join(from, export.ManifestName), name, v, err), nil
			}
		}
	}
	return "", nil
}

// printSummary is the human-readable digest printed without --json.
func printSummary(w io.Writer, r *audit.Result) {
	for _, wn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
	fmt.Fprintf(w, "paired items: %d (dropped %d)\n", r.Items, r.DroppedItems.Count)
	if r.DroppedItems.Count > 0 {
		fmt.Fprintf(w, "  %s\n", r.DroppedItems.Reason)
	}
	if r.Items > 0 {
		width := 16
		for _, id := range r.MCConfigs {
			width = max(width, len(id))
		}
		for _, id := range r.MCConfigs {
			fmt.Fprintf(w, "  %-*s %6s", width, id, report.F1(r.Accuracy[id]))
			if n := r.Unparsed.ByConfig[id]; n > 0 {
				fmt.Fprintf(w, "  (%d unparsed, %.0f%%; %s over parsed)", n, r.Unparsed.Share[id], report.P(r.Unparsed.AccuracyParsed[id]))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "best fixed %s (%s), oracle %s, headroom %s %s\n", report.P(r.BestFixed), r.BestFixedConfig,
			report.P(r.OracleAccuracy), report.P(r.OracleHeadroom), report.CI(r.OracleHeadroomCI))
		fmt.Fprintf(w, "visual confusion %s%% %s, text overwrite %s%%, terminal regression %s%%, unstable %s%%\n",
			report.P(r.VisualConfusionRate), report.CI(r.VisualConfusionRateCI), report.P(r.TextOverwriteRate),
			report.P(r.TerminalRegressionRate), report.P(r.UnstableRate))
		for _, p := range r.Pairs {
			if p.Adjacent {
				fmt.Fprintf(w, "  %s → %s: +%d −%d (net %+.1f, McNemar p %s)\n", p.From, p.To, p.Rescued, p.Harmed, p.Net, report.PValue(p.McNemarP))
			}
		}
	}
	for _, c := range r.Configs {
		h := r.AccuracyHarness[c.ID]
		if h == nil {
			continue
		}
		parts := h.Parts
		if len(parts) == 0 {
			parts = []*audit.HarnessAccuracy{h}
		}
		for _, p := range parts {
			extra := ""
			if p.LeftOut > 0 {
				extra += fmt.Sprintf(", %d left out by the harness", p.LeftOut)
			}
			if p.Rescored > 0 {
				extra += fmt.Sprintf(", %d rescored", p.Rescored)
			}
			if !p.Complete {
				extra += ", computed on the imported file before filtering"
			}
			fmt.Fprintf(w, "harness %s: %s = %s (item level %s over the same %d records%s)\n", c.ID, p.Metric, report.F2(p.Value), report.F2(p.ItemLevel), p.Records, extra)
		}
	}
	if c := r.Cascade; c != nil && c.Selected != nil {
		fmt.Fprintf(w, "cascade: τ=%.4g gives %s at %s shared frames (reference %s: %s at %s)\n", c.Selected.Tau, report.F1(c.Selected.Accuracy),
			report.F1(c.Selected.SharedFramesCost), c.Reference, report.F1(c.ReferenceAccuracy), report.F1(c.ReferenceShared))
	}
	if oe := r.OpenEnded; oe != nil {
		fmt.Fprintf(w, "open-ended: %d items, oracle gap %s\n", oe.Items, report.F1(oe.OracleGap))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func runCascade(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cascade", stderr)
	var af analysisFlags
	af.register(fs)
	asJSON := fs.Bool("json", false, "print the cascade as JSON")
	offline := fs.String("offline", "", "with an online cascade RUN: a full sweep RUN of the same items to replay the cascade on and compare with")
	htmlOut := fs.String("html", "", "with --offline: write the comparison as a self-contained HTML report")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep cascade RUN_DIR|RECORDS.jsonl... --budgets 16,32,64,128 [--folds K] [--json]\n       framesweep cascade ONLINE_RUN [--offline FULL_RUN] [--json]")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) == 0 {
		return usageErr(stderr, "cascade", "need a run directory or records files")
	}
	opt, bad := af.options()
	if bad != "" {
		return usageErr(stderr, "cascade", "%s", bad)
	}
	for _, p := range pos { // an export is read only once it is what its manifest records
		if _, _, err := export.LoadManifest(p); err != nil {
			return failErr(stderr, "cascade", err)
		}
	}
	recs, err := runs.ReadAll(context.Background(), pos)
	if err != nil {
		return failErr(stderr, "cascade", err)
	}
	if oc, err := cascade.SummarizeOnline(recs); err != nil {
		return failErr(stderr, "cascade", err)
	} else if oc != nil {
		if *htmlOut != "" && *offline == "" {
			return usageErr(stderr, "cascade", "--html needs --offline FULL_RUN")
		}
		return onlineCascade(oc, recs, *offline, *htmlOut, pos, *asJSON, stdout, stderr)
	}
	if *offline != "" || *htmlOut != "" {
		return usageErr(stderr, "cascade", "--offline/--html compare an online cascade RUN; %s holds a full sweep", strings.Join(pos, ","))
	}
	c, why, err := cascade.Offline(recs, opt.Cascade, opt.Seed, opt.DefaultPolicy)
	if err != nil {
		return failErr(stderr, "cascade", err)
	}
	if c != nil {
		if parts := c.UnparsedBudgets(); len(parts) > 0 {
			fmt.Fprintf(stderr, "framesweep cascade: warning: %s\n", cascade.UnparsedWarning(parts))
		}
	}
	if c == nil || c.Items == 0 {
		if c != nil && c.DroppedReason != "" {
			why += " (" + c.DroppedReason + ")"
		}
		return failErr(stderr, "cascade", fmt.Errorf("%s: %s", strings.Join(pos, ","), why))
	}
	if *asJSON {
		if err := writeJSON(stdout, c); err != nil {
			return failErr(stderr, "cascade", err)
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "%d items, budgets:", c.Items)
	for _, b := range c.Budgets {
		fmt.Fprintf(stdout, " %s=%s", b.Config, report.F1(b.Accuracy))
	}
	fmt.Fprintf(stdout, "\nreference %s: %s points at %s shared frames\n", c.Reference, report.F1(c.ReferenceAccuracy), report.F1(c.ReferenceShared))
	if s := c.Selected; s != nil {
		fmt.Fprintf(stdout, "cascade τ=%.4g: %s points at %s shared frames (%s)\n", s.Tau, report.F1(s.Accuracy), report.F1(s.SharedFramesCost), report.Saving(c.SharedCostSaving))
	} else {
		fmt.Fprintln(stdout, "no τ reaches the reference accuracy")
	}
	if cf := c.CrossFitted; cf != nil {
		fmt.Fprintf(stdout, "%d-fold cross-fitted: %s points at %s shared frames\n", c.Folds, report.F1(cf.Accuracy), report.F1(cf.SharedFramesCost))
	}
	return exitOK
}

// onlineCascade reports an online cascade RUN: its summary and, with offline (a full sweep of the same
// items), the offline replay at the same threshold (cascade.CompareOnline); exit 1 when an item stops
// elsewhere than the replay predicts.
func onlineCascade(oc *cascade.Online, recs []record.Record, offline, htmlOut string, pos []string, asJSON bool, stdout, stderr io.Writer) int {
	rep := &cascade.Comparison{Online: oc}
	if offline != "" {
		full, err := runs.ReadAll(context.Background(), []string{offline})
		if err != nil {
			return failErr(stderr, "cascade", err)
		}
		if rep, err = cascade.CompareOnline(oc, recs, full, offline); err != nil {
			return failErr(stderr, "cascade", err)
		}
	}
	if htmlOut != "" {
		var buf bytes.Buffer
		cmp := &report.Comparison{Online: oc, Offline: rep.Offline, Agree: *rep.Agree, Disagree: rep.Disagree,
			FramesSaving: rep.FramesSaving, LatencySaving: rep.LatencySaving, Sources: append(append([]string{}, pos...), offline)}
		if err := report.CascadeHTML(&buf, cmp); err != nil {
			return failErr(stderr, "cascade", err)
		}
		if err := os.WriteFile(htmlOut, buf.Bytes(), 0o644); err != nil {
			return failErr(stderr, "cascade", err)
		}
	}
	if asJSON {
		if err := writeJSON(stdout, rep); err != nil {
			return failErr(stderr, "cascade", err)
		}
		if len(rep.Disagree) > 0 {
			return exitError
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "online cascade %v at threshold %.4g: %d items, %s points, %s frames fed and %s distinct frames per item, %.3fs answering (%.3fs with input builds) per item\n",
		oc.Budgets, oc.Threshold, oc.Items, report.F1(oc.Accuracy), report.F1(oc.MeanFramesFed), report.F1(oc.MeanFramesDistinct), oc.MeanLatencyS, oc.MeanWallS)
	for _, s := range oc.StoppedAt {
		fmt.Fprintf(stdout, "  stopped at %d frames: %d items\n", s.Budget, s.Items)
	}
	if rep.Offline != nil {
		fmt.Fprintf(stdout, "offline replay on %s: %d items stop where they did online, %d differ\n", offline, *rep.Agree, len(rep.Disagree))
		for _, b := range rep.Offline.Budgets {
			fmt.Fprintf(stdout, "  fixed %s: %s points at %s distinct frames\n", b.Config, report.F1(b.Accuracy), report.F1(b.SharedFramesCost))
		}
		fmt.Fprintf(stdout, "  vs fixed top budget on the same items: %s distinct frames, %s answer latency\n", report.Saving(rep.FramesSaving), report.Saving(rep.LatencySaving))
	}
	if len(rep.Disagree) > 0 {
		fmt.Fprintf(stderr, "framesweep cascade: %d items stop elsewhere than the offline replay predicts (first: %s)\n", len(rep.Disagree), rep.Disagree[0])
		return exitError
	}
	return exitOK
}

// printModelsSummary is the digest of a multi-model audit printed without --json.
func printModelsSummary(w io.Writer, r *audit.ModelsResult) {
	mg := r.MatchedGrid
	for _, wn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
	fmt.Fprintf(w, "%d models, matched grid %s: %d items (dropped %d)\n", len(r.Models), strings.Join(mg.Configs, " "), mg.Items, mg.Dropped)
	for _, m := range mg.OverCeiling {
		fmt.Fprintf(w, "  over the ceiling: %s of %s (%s %s)\n", m.Config, m.Model, m.Source, ceilingLimit(m))
	}
	for _, lo := range mg.LeftOut {
		if len(lo.Missing) > 0 {
			fmt.Fprintf(w, "  left out: %s (missing from %s)\n", lo.Config, strings.Join(lo.Missing, ", "))
		}
	}
	fmt.Fprintf(w, "%-24s %7s %10s %8s %9s %10s %9s %7s\n", "model", "items", "best fixed", "oracle", "headroom", "confusion", "overwrite", "churn")
	for _, row := range r.Table {
		if row.Split != "all" || row.Duration != "all" || row.Kind != "multiple_choice" {
			continue
		}
		churn := "–"
		if row.Churn != nil {
			churn = fmt.Sprint(*row.Churn)
		}
		fmt.Fprintf(w, "%-24s %7d %10s %8s %9s %9s%% %8s%% %7s\n", row.Model, row.Items, report.P(row.BestFixed), report.P(row.Oracle),
			report.P(row.OracleHeadroom), report.P(row.VisualConfusionRate), report.P(row.TextOverwriteRate), churn)
	}
	if cm := r.CrossModel; cm != nil && cm.Items > 0 {
		var k []string
		for _, c := range cm.ConfusedInK {
			k = append(k, fmt.Sprintf("%d:%d", c.K, c.Items))
		}
		fmt.Fprintf(w, "confused sets: mean Jaccard %s, mean κ %s; items confused in k models %s\n", report.F3(cm.MeanJaccard), report.F3(cm.MeanKappa), strings.Join(k, " "))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func ceilingLimit(m audit.CeilingMark) string {
	switch {
	case m.Limit == nil:
		return "(the runtime refused its prompts)"
	case m.Source == "context":
		return fmt.Sprintf("%d tokens", *m.Limit)
	default:
		return fmt.Sprintf("%d frames", *m.Limit)
	}
}
