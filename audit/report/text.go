package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/cascade"
)

// Text writes the short text summary of one model's audit (`framesweep audit` without --json):
// warnings first, the paired items, accuracy per config, the headline metrics, the adjacent flows,
// the harnesses' own numbers, the cascade and the notes.
func Text(w io.Writer, r *audit.Result) {
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
			fmt.Fprintf(w, "  %-*s %6s", width, id, F1(r.Accuracy[id]))
			if n := r.Unparsed.ByConfig[id]; n > 0 {
				fmt.Fprintf(w, "  (%d unparsed, %.0f%%; %s over parsed)", n, r.Unparsed.Share[id], P(r.Unparsed.AccuracyParsed[id]))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "best fixed %s (%s), oracle %s, headroom %s %s\n", P(r.BestFixed), r.BestFixedConfig,
			P(r.OracleAccuracy), P(r.OracleHeadroom), CI(r.OracleHeadroomCI))
		fmt.Fprintf(w, "visual confusion %s%% %s, text overwrite %s%%, terminal regression %s%%, unstable %s%%\n",
			P(r.VisualConfusionRate), CI(r.VisualConfusionRateCI), P(r.TextOverwriteRate),
			P(r.TerminalRegressionRate), P(r.UnstableRate))
		for _, p := range r.Pairs {
			if p.Adjacent {
				fmt.Fprintf(w, "  %s → %s: +%d −%d (net %+.1f, McNemar p %s)\n", p.From, p.To, p.Rescued, p.Harmed, p.Net, PValue(p.McNemarP))
			}
		}
		for _, u := range UndefinedLines(r.Undefined) {
			fmt.Fprintf(w, "  undefined (–) %s\n", u)
		}
	}
	for _, t := range sortedTasks(r.Tasks) {
		tr := r.Tasks[t]
		fmt.Fprintf(w, "task %s: %d items, best fixed %s (%s), oracle %s, headroom %s, visual confusion %s%%, text overwrite %s%%\n", t, tr.Items,
			P(tr.BestFixed), tr.BestFixedConfig, P(tr.OracleAccuracy), P(tr.OracleHeadroom), P(tr.VisualConfusionRate), P(tr.TextOverwriteRate))
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
			fmt.Fprintf(w, "harness %s: %s = %s (item level %s over the same %d records%s)\n", c.ID, p.Metric, F2(p.Value), F2(p.ItemLevel), p.Records, extra)
		}
	}
	if c := r.Cascade; c != nil && c.Selected != nil {
		fmt.Fprintf(w, "cascade: τ=%.4g gives %s at %s shared frames (reference %s: %s at %s)\n", c.Selected.Tau, F1(c.Selected.Accuracy),
			F1(c.Selected.SharedFramesCost), c.Reference, F1(c.ReferenceAccuracy), F1(c.ReferenceShared))
	}
	if oe := r.OpenEnded; oe != nil {
		fmt.Fprintf(w, "open-ended: %d items, oracle gap %s\n", oe.Items, F1(oe.OracleGap))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// ModelsText writes the short text summary of several models' audit: the matched grid, what is
// over a ceiling or left out, one row per model, the cross-model structure and the notes.
func ModelsText(w io.Writer, r *audit.ModelsResult) {
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
	fmt.Fprintf(w, "%-24s %7s %10s %8s %9s %10s %9s %7s %7s\n", "model", "items", "best fixed", "oracle", "headroom", "confusion", "overwrite", "churn", "errors")
	for _, row := range r.Table { // the pooled rows, then each task's (its own matched grid)
		if row.Duration != "all" || row.Kind != "multiple_choice" {
			continue
		}
		churn := "–"
		if row.Churn != nil {
			churn = fmt.Sprint(*row.Churn)
		}
		name, errs := row.Model, "–"
		if row.Split != "all" {
			name += " [" + row.Split + "]"
		} else if mi := r.ModelInfo[row.Model]; mi != nil {
			errs = fmt.Sprint(mi.ErrorRecords)
		}
		fmt.Fprintf(w, "%-24s %7d %10s %8s %9s %9s%% %8s%% %7s %7s\n", name, row.Items, P(row.BestFixed), P(row.Oracle),
			P(row.OracleHeadroom), P(row.VisualConfusionRate), P(row.TextOverwriteRate), churn, errs)
	}
	var lines []string // each undefined line once, with the models it holds for
	who := map[string][]string{}
	for _, m := range r.Models {
		if res := r.PerModel[m]; res != nil {
			for _, u := range UndefinedLines(res.Undefined) {
				if who[u] == nil {
					lines = append(lines, u)
				}
				who[u] = append(who[u], m)
			}
		}
	}
	for _, u := range lines {
		fmt.Fprintf(w, "  undefined (–) for %s: %s\n", strings.Join(who[u], ", "), u)
	}
	if cm := r.CrossModel; cm != nil && cm.Items > 0 {
		if why := cm.Undefined["confused_in_k"]; why != "" {
			fmt.Fprintf(w, "confused sets: undefined (–): %s\n", why)
		} else {
			var k []string
			for _, c := range cm.ConfusedInK {
				k = append(k, fmt.Sprintf("%d:%d", c.K, c.Items))
			}
			fmt.Fprintf(w, "confused sets: mean Jaccard %s, mean κ %s; items confused in k models %s\n", F3(cm.MeanJaccard), F3(cm.MeanKappa), strings.Join(k, " "))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// sortedTasks are the keys of a result's per-task audits, sorted.
func sortedTasks[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
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

// CascadeText writes the short text summary of an offline cascade (`framesweep cascade` without
// --json): each budget's accuracy, the reference, the selected τ and the cross-fitted estimate.
func CascadeText(w io.Writer, c *cascade.Result) {
	fmt.Fprintf(w, "%d items, budgets:", c.Items)
	for _, b := range c.Budgets {
		fmt.Fprintf(w, " %s=%s", b.Config, F1(b.Accuracy))
	}
	fmt.Fprintf(w, "\nreference %s: %s points at %s shared frames\n", c.Reference, F1(c.ReferenceAccuracy), F1(c.ReferenceShared))
	if s := c.Selected; s != nil {
		fmt.Fprintf(w, "cascade τ=%.4g: %s points at %s shared frames (%s)\n", s.Tau, F1(s.Accuracy), F1(s.SharedFramesCost), Saving(c.SharedCostSaving))
	} else {
		fmt.Fprintln(w, "no τ reaches the reference accuracy")
	}
	if cf := c.CrossFitted; cf != nil {
		fmt.Fprintf(w, "%d-fold cross-fitted: %s points at %s shared frames\n", c.Folds, F1(cf.Accuracy), F1(cf.SharedFramesCost))
	}
}

// OnlineText writes the short text summary of an online cascade run and, when rep holds the replay
// on a full sweep (offline names it), the comparison with it.
func OnlineText(w io.Writer, rep *cascade.Comparison, offline string) {
	oc := rep.Online
	fmt.Fprintf(w, "online cascade %v at threshold %.4g: %d items, %s points, %s frames fed and %s distinct frames per item, %.3fs answering (%.3fs with input builds) per item\n",
		oc.Budgets, oc.Threshold, oc.Items, F1(oc.Accuracy), F1(oc.MeanFramesFed), F1(oc.MeanFramesDistinct), oc.MeanLatencyS, oc.MeanWallS)
	for _, s := range oc.StoppedAt {
		fmt.Fprintf(w, "  stopped at %d frames: %d items\n", s.Budget, s.Items)
	}
	if rep.Offline != nil {
		fmt.Fprintf(w, "offline replay on %s: %d items stop where they did online, %d differ\n", offline, *rep.Agree, len(rep.Disagree))
		for _, b := range rep.Offline.Budgets {
			fmt.Fprintf(w, "  fixed %s: %s points at %s distinct frames\n", b.Config, F1(b.Accuracy), F1(b.SharedFramesCost))
		}
		fmt.Fprintf(w, "  vs fixed top budget on the same items: %s distinct frames, %s answer latency\n", Saving(rep.FramesSaving), Saving(rep.LatencySaving))
	}
}
