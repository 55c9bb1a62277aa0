package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/framesweep/framesweep/audit/cascade"
	"github.com/framesweep/framesweep/audit/export"
	"github.com/framesweep/framesweep/audit/report"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

func runCascade(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cascade", stderr)
	var af analysisFlags
	af.register(fs)
	asJSON := addJSON(fs, false)
	offline := fs.String("offline", "", "with an online cascade RUN: a full sweep RUN of the same items to replay the cascade on and compare with")
	htmlOut := fs.String("html", "", "with --offline: write the comparison as a self-contained HTML report")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep cascade RUN_DIR|RECORDS.jsonl... [--cascade 16,32,64,128] [--folds K] [--json]\n       framesweep cascade ONLINE_RUN [--offline FULL_RUN [--html FILE]] [--json]")
		printFlags(fs)
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
	if err := cascade.Check(c, why, strings.Join(pos, ",")); err != nil {
		return failErr(stderr, "cascade", err)
	}
	if *asJSON {
		if err := writeJSON(stdout, c); err != nil {
			return failErr(stderr, "cascade", err)
		}
		return exitOK
	}
	report.CascadeText(stdout, c)
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
		if err := report.CascadeHTML(&buf, rep, append(append([]string{}, pos...), offline)); err != nil {
			return failErr(stderr, "cascade", err)
		}
		if err := writeReport(htmlOut, buf.Bytes()); err != nil {
			return failErr(stderr, "cascade", err)
		}
	}
	if asJSON {
		if err := writeJSON(stdout, rep); err != nil {
			return failErr(stderr, "cascade", err)
		}
	} else {
		report.OnlineText(stdout, rep, offline)
	}
	if len(rep.Disagree) > 0 {
		if !asJSON {
			fmt.Fprintf(stderr, "framesweep cascade: %d items stop elsewhere than the offline replay predicts (first: %s)\n", len(rep.Disagree), rep.Disagree[0])
		}
		return exitError
	}
	return exitOK
}
