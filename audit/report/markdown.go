package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/framesweep/framesweep/audit"
)

// mdEscaper keeps a field framesweep did not write itself (a name from the records, a path, a title, a
// runtime spec) inert text wherever a Markdown report puts it, as the HTML report's escaping does: a
// line break would end a table row or a paragraph and "|" a table cell, and the punctuation that
// Markdown or inline HTML give a meaning to is backslash-escaped (CommonMark lets any ASCII
// punctuation be), so "<script>" is shown, not run, "[x](javascript:…)" is no link and "*" no
// emphasis.
var mdEscaper = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ",
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`,
	"|", `\|`, "&", `\&`, "~", `\~`, "!", `\!`, "#", `\#`)

func mdEsc(s string) string { return mdEscaper.Replace(s) }

// MarkdownText is s as inert Markdown text (mdEscaper): for every field a Markdown output did not
// write itself, the export's datasheet included.
func MarkdownText(s string) string { return mdEsc(s) }

// Markdown writes the report's numbers as Markdown tables.
func Markdown(w io.Writer, r *audit.Result, opt Options) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	for _, section := range markdownSections {
		section(p, r, opt)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdPrinter appends formatted Markdown.
type mdPrinter func(format string, a ...any)

// markdownSections are the report's sections in order; each writes nothing when it has nothing to show.
var markdownSections = []func(p mdPrinter, r *audit.Result, opt Options){
	mdHeader,
	mdHarness,
	mdCore,
	mdItems,
	mdUnparsed,
	mdCascade,
	mdOnline,
	mdIsoCompute,
	mdPipelineFlips,
	mdProtocol,
	mdNoiseFloor,
	mdOpenEnded,
}

// mdHeader writes the title, the sources, and why items were dropped.
func mdHeader(p mdPrinter, r *audit.Result, opt Options) {
	p("# %s\n\n%d paired items, %d configurations", mdEsc(opt.title()), r.Items, len(r.Configs))
	if len(opt.Sources) > 0 {
		p(" (%s)", mdEsc(strings.Join(opt.Sources, ", ")))
	}
	p(".\n\n")
	for _, w := range r.Warnings {
		p("> **Warning:** %s\n\n", w)
	}
	// Notes are framesweep's sentences, but they quote ids and names from the records.
	if r.DroppedItems.Count > 0 {
		p("> %s\n\n", mdEsc(r.DroppedItems.Reason))
	}
	for _, n := range r.Notes {
		p("> %s\n\n", mdEsc(n))
	}
	for _, u := range UndefinedLines(r.Undefined) {
		p("> undefined (—) %s\n\n", mdEsc(u))
	}
}

// mdHarness writes the harness's own numbers beside the item-level accuracy of the same records.
func mdHarness(p mdPrinter, r *audit.Result, _ Options) {
	if rows := harnessRows(r); len(rows) > 0 {
		p("## The harness's own numbers\n\nThe aggregate each imported log's harness reports (its rule, its verdicts; two decimals), beside the item-level accuracy of the same records and the paired accuracy.\n\n")
		p("| config | harness metric | harness | counted | left out | item-level, same records | paired accuracy | rescored | by duration |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, h := range rows {
			v := F2(h.value)
			if !h.complete {
				v += " (imported file; records since filtered)"
			}
			p("| %s | %s | %s | %d | %d | %s | %s | %d | %s |\n", mdEsc(h.config), mdEsc(h.metric), v, h.counted, h.leftOut, F2(h.itemLevel), F2(h.paired), h.rescored, mdEsc(h.byDuration))
		}
		p("\n")
	}
}

// mdCore writes the core metrics, accuracy per config, the pairs, and the metrics per category and duration.
func mdCore(p mdPrinter, r *audit.Result, _ Options) {
	if r.Items > 0 {
		p("## Summary\n\n| metric | value |\n|---|---|\n")
		p("| best fixed | %s (%s) |\n", P(r.BestFixed), mdEsc(r.BestFixedConfig))
		p("| oracle accuracy | %s |\n", P(r.OracleAccuracy))
		p("| oracle headroom | %s %s |\n", P(r.OracleHeadroom), CI(r.OracleHeadroomCI))
		p("| visual confusion %% | %s %s |\n", P(r.VisualConfusionRate), CI(r.VisualConfusionRateCI))
		p("| visual confusion (visual only) %% | %s |\n", P(r.VisualConfusionRateVisualOnly))
		p("| terminal regression %% | %s |\n", P(r.TerminalRegressionRate))
		p("| text overwrite %% | %s |\n", P(r.TextOverwriteRate))
		p("| text overwrite, of text-correct %% | %s |\n", P(r.TextOverwriteRateOfTextCorrect))
		p("| text overwrite, all visual %% | %s |\n", P(r.TextOverwriteAllVisualRate))
		p("| unstable %% | %s |\n", P(r.UnstableRate))
		if r.SamplingRecoveryRate != nil {
			p("| sampling recovery %% | %s |\n", P(r.SamplingRecoveryRate))
		}
		mdLadders(p, r)
		p("\n## Pairs\n\n| from | to | adjacent | rescued | harmed | churn | net | state change %% | McNemar p |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, q := range r.Pairs {
			p("| %s | %s | %v | %d | %d | %d | %+.1f | %s | %s |\n", mdEsc(q.From), mdEsc(q.To), q.Adjacent, q.Rescued, q.Harmed, q.Churn, q.Net, F1(q.StateChangeRate), PValue(q.McNemarP))
		}
		for _, sec := range []struct {
			name string
			m    map[string]*audit.Metrics
		}{{"category", r.Categories}, {"duration", r.Durations}} {
			if len(sec.m) == 0 {
				continue
			}
			p("\n## Per %s\n\n| %s | items | best fixed | oracle | headroom | confusion %% | text overwrite %% | unstable %% |\n|---|---|---|---|---|---|---|---|\n", sec.name, sec.name)
			for _, k := range keysOf(sec.m) {
				m := sec.m[k]
				p("| %s | %d | %s | %s | %s %s | %s | %s | %s |\n", mdEsc(k), m.Items, P(m.BestFixed), P(m.OracleAccuracy), P(m.OracleHeadroom), CI(m.OracleHeadroomCI), P(m.VisualConfusionRate), P(m.TextOverwriteRate), P(m.UnstableRate))
			}
		}
	}
}

// mdItems names the items behind the rates (itemLists), when the report was given them.
func mdItems(p mdPrinter, r *audit.Result, opt Options) {
	if ls := itemLists(r, itemSet(opt, "", r), opt.Questions); len(ls) > 0 && r.Items > 0 {
		p("\n## The items behind the rates\n\nEvery item each rate counts, by id (the first %d of a list; the export lists them all).\n", MaxListed)
		mdItemLists(p, ls, verdictOrder(r))
	}
}

// mdCascade writes the offline confidence cascade.
func mdCascade(p mdPrinter, r *audit.Result, _ Options) {
	if cr := r.Cascade; cr != nil {
		p("\n## Confidence cascade\n\n%d items, reference %s at %s; shared cost by %s.\n\n| policy | accuracy | shared frames |\n|---|---|---|\n", cr.Items, mdEsc(cr.Reference), F1(cr.ReferenceAccuracy), cr.SharedCostBasis)
		for _, bu := range cr.Budgets {
			p("| fixed %s | %s | %s |\n", mdEsc(bu.Config), F1(bu.Accuracy), F1(bu.SharedFramesCost))
		}
		if s := cr.Selected; s != nil {
			p("| cascade τ = %.4g | %s | %s (%s) |\n", s.Tau, F1(s.Accuracy), F1(s.SharedFramesCost), Saving(cr.SharedCostSaving))
		}
		if cf := cr.CrossFitted; cf != nil {
			p("| cascade, %d-fold cross-fitted | %s | %s |\n", cr.Folds, F1(cf.Accuracy), F1(cf.SharedFramesCost))
		}
	}
}

// mdOnline writes an online cascade run.
func mdOnline(p mdPrinter, r *audit.Result, _ Options) {
	if oc := r.OnlineCascade; oc != nil {
		p("\n## Online confidence cascade\n\n%v frames, threshold %.4g: %d items, %s points from the final answers; %s frames fed, %s distinct frames, %.3f s answering (%.3f s with input builds) per item.\n\n| stopped at | items |\n|---|---|\n",
			oc.Budgets, oc.Threshold, oc.Items, F1(oc.Accuracy), F1(oc.MeanFramesFed), F1(oc.MeanFramesDistinct), oc.MeanLatencyS, oc.MeanWallS)
		for _, s := range oc.StoppedAt {
			p("| %s (%d frames) | %d |\n", mdEsc(s.Config), s.Budget, s.Items)
		}
	}
}

// mdIsoCompute writes the iso-compute groups.
func mdIsoCompute(p mdPrinter, r *audit.Result, _ Options) {
	if len(r.IsoCompute) > 0 {
		p("\n## Iso-compute groups\n\n| group | config | accuracy | only this one right |\n|---|---|---|---|\n")
		for gi, g := range r.IsoCompute {
			for _, c := range g.Configs {
				p("| %d | %s | %s | %d |\n", gi+1, mdEsc(c), F1(g.Accuracy[c]), g.OnlyCorrect[c])
			}
			p("| %d | group oracle | %s | |\n", gi+1, F1(g.Oracle))
		}
	}
}

// mdPipelineFlips writes answer flips between the raw and cached pipelines.
func mdPipelineFlips(p mdPrinter, r *audit.Result, _ Options) {
	if len(r.PipelineFlips) > 0 {
		p("\n## Raw vs cached\n\n| raw | cached | flips | %% items |\n|---|---|---|---|\n")
		for _, f := range r.PipelineFlips {
			p("| %s | %s | %d | %s |\n", mdEsc(f.Raw), mdEsc(f.Cached), f.Flips, F1(f.Rate))
		}
	}
}

// mdNoiseFloor writes the rerun noise floor.
func mdNoiseFloor(p mdPrinter, r *audit.Result, _ Options) {
	if len(r.NoiseFloor) > 0 {
		p("\n## Rerun noise floor\n\n| config | runs | mean churn %% |\n|---|---|---|\n")
		for _, n := range r.NoiseFloor {
			p("| %s | %d | %s |\n", mdEsc(n.Config), len(n.Runs), P(n.MeanChurnRate))
		}
	}
}

// mdOpenEnded writes the open-ended (Token-F1) metrics.
func mdOpenEnded(p mdPrinter, r *audit.Result, _ Options) {
	if oe := r.OpenEnded; oe != nil {
		p("\n## Open-ended (Token-F1)\n\n%d items; best fixed %s (%s); oracle %s; oracle gap %s.\n\n| from | to | mean change | regressed %% | improved %% |\n|---|---|---|---|---|\n",
			oe.Items, F1(oe.BestFixed), mdEsc(oe.BestConfig), F1(oe.OracleMean), F1(oe.OracleGap))
		for _, q := range oe.Regression {
			p("| %s | %s | %+.1f | %s | %s |\n", mdEsc(q.From), mdEsc(q.To), q.MeanChange, F1(q.RegressionRate), F1(q.ImprovedRate))
		}
	}
}

// mdProtocol writes the protocol agreement of ladders that differ in one factor.
func mdProtocol(p mdPrinter, r *audit.Result, _ Options) {
	if len(r.ProtocolAgreement) == 0 {
		return
	}
	p("\n## Protocol agreement\n\n| factor | A | B | budgets | headroom A / B | confusion %% A / B | κ | Jaccard | tag flips %% | verdict flips %% |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, q := range r.ProtocolAgreement {
		p("%s\n", mdProtocolRow(q))
	}
}

// mdUnparsed writes every config's unparsed answers, when there are any.
func mdUnparsed(p mdPrinter, r *audit.Result, _ Options) {
	u := r.Unparsed
	if u == nil || u.Count == 0 || r.Items == 0 {
		return
	}
	p("## Unparsed answers\n\nReplies that named no option letter: counted wrong everywhere above; the accuracy over the parsed answers alone beside it.\n\n")
	p("| config | answers | unparsed | share %% | accuracy | accuracy over parsed |\n|---|---|---|---|---|---|\n")
	for _, id := range r.MCConfigs {
		p("| %s | %d | %d | %s | %s | %s |\n", mdEsc(id), r.Items, u.ByConfig[id], F1(u.Share[id]), F1(r.Accuracy[id]), P(u.AccuracyParsed[id]))
	}
	p("\n")
}
