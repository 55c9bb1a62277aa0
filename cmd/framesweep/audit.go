package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/report"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/runs"
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
	if a.folds < 0 {
		return opt, "--folds must not be negative"
	}
	opt.Cascade.Folds, opt.Cascade.Policy, opt.Cascade.Reference = a.folds, a.policy, a.reference
	if a.budgets != "" {
		for _, f := range strings.Split(a.budgets, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				return opt, fmt.Sprintf("--budgets: %q is not a positive frame count", f)
			}
			opt.Cascade.Budgets = append(opt.Cascade.Budgets, n)
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

func runAudit(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("audit", stderr)
	var af analysisFlags
	af.register(fs)
	asJSON := fs.Bool("json", false, "print the audit as one JSON object (METRICS.md \"Output\")")
	mdPath := fs.String("md", "", "also write a Markdown report to FILE")
	htmlPath := fs.String("html", "", "also write the self-contained HTML report to FILE")
	title := fs.String("title", "framesweep audit", "report title")
	resamples := fs.Int("resamples", 1000, "bootstrap resamples (0: no intervals)")
	epsilon := fs.Float64("epsilon", 0.05, "open-ended regression margin on the 0–1 score scale")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep audit RECORDS.jsonl|RUN_DIR... [--json] [--md FILE] [--html FILE] [--seed S] [--budgets 16,32,...] [--folds K]")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) == 0 {
		return usageErr(stderr, "audit", "need at least one records file or run directory")
	}
	opt, bad := af.options()
	if bad != "" {
		return usageErr(stderr, "audit", "%s", bad)
	}
	if *resamples < 0 || *epsilon < 0 || *epsilon > 1 {
		return usageErr(stderr, "audit", "--resamples must be ≥ 0 and --epsilon within [0,1]")
	}
	opt.Resamples, opt.Epsilon = *resamples, *epsilon
	recs, err := runs.ReadAll(context.Background(), pos)
	if err != nil {
		return failErr(stderr, "audit", err)
	}
	res, err := audit.Analyze(recs, opt)
	if err != nil {
		return failErr(stderr, "audit", err)
	}
	ropt := report.Options{Title: *title, Sources: pos}
	for _, out := range []struct {
		path   string
		render func(io.Writer, *audit.Result, report.Options) error
	}{{*htmlPath, report.HTML}, {*mdPath, report.Markdown}} {
		if out.path == "" {
			continue
		}
		var buf bytes.Buffer
		if err := out.render(&buf, res, ropt); err != nil {
			return failErr(stderr, "audit", fmt.Errorf("%s: %w", out.path, err))
		}
		if err := os.WriteFile(out.path, buf.Bytes(), 0o644); err != nil {
			return failErr(stderr, "audit", err)
		}
	}
	if *asJSON {
		if err := writeJSON(stdout, res); err != nil {
			return failErr(stderr, "audit", err)
		}
		return exitOK
	}
	printSummary(stdout, res)
	return exitOK
}

// printSummary is the human-readable digest printed without --json.
func printSummary(w io.Writer, r *audit.Result) {
	fmt.Fprintf(w, "paired items: %d (dropped %d)\n", r.Items, r.DroppedItems.Count)
	if r.DroppedItems.Count > 0 {
		fmt.Fprintf(w, "  %s\n", r.DroppedItems.Reason)
	}
	if r.Items > 0 {
		for _, id := range r.MCConfigs {
			fmt.Fprintf(w, "  %-16s %6s\n", id, report.F1(r.Accuracy[id]))
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
	recs, err := runs.ReadAll(context.Background(), pos)
	if err != nil {
		return failErr(stderr, "cascade", err)
	}
	if oc, err := audit.Online(recs); err != nil {
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
	c, why, err := audit.Cascade(recs, opt)
	if err != nil {
		return failErr(stderr, "cascade", err)
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
// items), the offline replay at the same threshold (audit.CompareOnline); exit 1 when an item stops
// elsewhere than the replay predicts.
func onlineCascade(oc *audit.OnlineCascade, recs []record.Record, offline, htmlOut string, pos []string, asJSON bool, stdout, stderr io.Writer) int {
	rep := &audit.OnlineComparison{Online: oc}
	if offline != "" {
		full, err := runs.ReadAll(context.Background(), []string{offline})
		if err != nil {
			return failErr(stderr, "cascade", err)
		}
		if rep, err = audit.CompareOnline(oc, recs, full, offline); err != nil {
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
