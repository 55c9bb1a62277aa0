package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/cascade"
)

const css = `
:root{--ink:#1f2933;--muted:#7b8794;--line:#e4e7eb;--bg:#f6f7f9;--ok:#2b8a62;--bad:#d64545;--acc:#3b5bdb}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
header{background:linear-gradient(120deg,#1f2a44,#2f4a8a);color:#fff;padding:34px 48px 28px}
header h1{margin:0 0 6px;font-size:30px;font-weight:700;letter-spacing:-.01em}
header p{margin:0;color:#c9d3e8;font-size:14px}
main{max-width:1232px;margin:0 auto;padding:24px 24px 60px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(190px,1fr));gap:14px;margin:-46px 0 26px}
.card{background:#fff;border-radius:12px;padding:16px 18px;box-shadow:0 1px 3px rgba(16,24,40,.12)}
.card .k{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted)}
.card .v{font-size:28px;font-weight:700;margin-top:2px}
.card .s{font-size:12.5px;color:var(--muted)}
section{background:#fff;border-radius:12px;padding:22px 26px;margin:0 0 22px;box-shadow:0 1px 3px rgba(16,24,40,.08);overflow-x:auto}
section h2{margin:0 0 4px;font-size:19px}
section p.lead{margin:0 0 14px;color:#52606d;font-size:14px}
table{border-collapse:collapse;width:100%;font-size:13.5px;font-variant-numeric:tabular-nums}
th,td{padding:7px 8px;border-bottom:1px solid var(--line);text-align:right}
th{font-weight:600;color:#52606d;background:#fafbfc;vertical-align:bottom}
td.l{text-align:left} details summary{cursor:pointer;color:var(--acc);margin:12px 0 6px;font-size:14px}
td:first-child,th:first-child{text-align:left}
td.l,td:first-child{overflow-wrap:anywhere;min-width:6em}
tr:hover td{background:#f9fafb}
.ok{color:var(--ok);fill:var(--ok)} .bad{color:var(--bad);fill:var(--bad)} .muted{color:var(--muted)}
.note{background:#fff8e6;border-left:4px solid #f0b429;padding:10px 14px;border-radius:6px;font-size:13.5px;margin:8px 0}
.warn{background:#fde8e8;border-left:4px solid var(--bad);padding:10px 14px;border-radius:6px;font-size:14px;margin:8px 0;color:#7a1f1f}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
svg .tick{font-size:11px;fill:#7b8794} svg .axis{font-size:12px;fill:#52606d}
svg .val{font-size:12px;font-weight:600;fill:#1f2933} svg .cfg{font-size:12.5px;font-weight:600;fill:#1f2933}
svg .grp{font-size:12.5px;font-weight:600;fill:#52606d} svg .lbl{font-size:12px;font-weight:600}
svg .flowlbl{font-size:12px;font-weight:600} svg .grid{stroke:#eef0f3} svg .val.ok,svg .tick.ok,svg .cfg.ok{fill:#2b8a62}
svg .val.bad,svg .tick.bad{fill:#d64545}
svg .val,svg .lbl{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
.bar{display:inline-block;height:9px;border-radius:2px;background:var(--acc);vertical-align:middle;margin-right:6px}
footer{color:var(--muted);font-size:12.5px;text-align:center;margin-top:30px}
details.legend table{width:auto;font-size:12.5px} details.legend td,details.legend th{padding:3px 10px}
.swatch{display:inline-block;width:12px;height:12px;border-radius:3px;margin-right:6px;vertical-align:-1px}
p.models .model{margin-right:18px;font-size:13.5px;white-space:nowrap}
@media print{
body{background:#fff;font-size:12px}
header{background:none;color:var(--ink);padding:0 0 10px;border-bottom:2px solid var(--ink)}
header p{color:#52606d}
main{max-width:none;padding:12px 0 0}
.cards{margin:0 0 14px;grid-template-columns:repeat(auto-fit,minmax(150px,1fr))}
.card,section{box-shadow:none;border:1px solid var(--line)}
section{overflow:visible;padding:12px 14px;break-inside:auto}
table{font-size:10.5px} th,td{padding:3px 4px} th{overflow-wrap:anywhere}
tr,svg{break-inside:avoid}
}
`

// HTML writes the report as one self-contained HTML document.
func HTML(w io.Writer, r *audit.Result, opt Options) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	title := esc(opt.title())
	p(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">`)
	p(`<title>%s</title><style>%s</style></head><body>`, title, css)
	p(`<header><h1>%s</h1><p>Item-level scaling audit · %d paired items · %d configurations`, title, r.Items, len(r.Configs))
	if len(opt.Sources) > 0 {
		p(` · %s`, esc(strings.Join(opt.Sources, ", ")))
	}
	p(`</p></header><main>`)
	cards(&b, r)
	warnings(&b, r.Warnings)
	for _, n := range r.Notes {
		p(`<div class="note">%s</div>`, esc(n))
	}
	for _, u := range UndefinedLines(r.Undefined) {
		p(`<div class="note">undefined (—) %s</div>`, esc(u))
	}
	if r.DroppedItems.Count > 0 {
		p(`<div class="note">%s</div>`, esc(r.DroppedItems.Reason))
	}
	if rows := harnessRows(r); len(rows) > 0 {
		p(`<section><h2>The harness's own numbers</h2><p class="lead">The aggregate each imported log's harness reports — its own rule over its own verdicts, to two decimals as the harness prints it — beside the item-level accuracy of the same records and the paired accuracy (items present in every configuration). Macro aggregates (MLVU's M-avg) and rows the harness leaves out (VLMEvalKit's score &lt; 0) make them differ.</p>%s</section>`, harnessTable(rows))
	}
	if r.Items > 0 {
		p(`<section><h2>Accuracy against frames, and what each step changed</h2><p class="lead">%s</p>%s%s%s</section>`, accuracyLead(r), accuracyChart(r), looseNoteHTML(r), configLegend(r))
		if u := r.Unparsed; u != nil && u.Count > 0 {
			p(`<section><h2>Unparsed answers</h2><p class="lead">Replies that named no option letter. They count as wrong in every number of this report (every item stays in the denominator, as lmms-eval counts them); the accuracy over the parsed answers alone (Video-MME's official denominator) is beside it. A configuration mostly unparsed measures the answer parser, not the model.</p>%s</section>`, unparsedTable(r))
		}
		b.WriteString(visualTokensSection(r))
		if fc := flowChart(r); fc != "" {
			p(`<section><h2>Flows between configurations</h2><p class="lead">Each column splits the %d paired items into correct (green) and wrong (grey); the bands show where items go at the next budget.%s</p>%s</section>`, r.Items, esc(flowLead(r)), fc)
		}
		p(`<section><h2>Trajectories</h2><p class="lead">Every item's correctness under every configuration, grouped by pattern: confused items are right somewhere cheaper and wrong somewhere costlier.</p>%s</section>`, heatmap(r))
		if ls := itemLists(r, itemSet(opt, "", r), opt.Questions); len(ls) > 0 {
			p(`<section><h2>The items behind the rates</h2><p class="lead">Every item each rate counts, by id (the first %d of a list; the export lists them all).</p>%s</section>`, MaxListed, itemListsHTML(ls, verdictOrder(r)))
		}
		p(`<section><h2>Oracle vs best fixed configuration</h2><p class="lead">Picking the configuration per item would reach %s points; the best single configuration (%s) reaches %s. Headroom %s points, 95%% interval %s.</p>%s</section>`,
			P(r.OracleAccuracy), esc(r.BestFixedConfig), P(r.BestFixed), P(r.OracleHeadroom), CI(r.OracleHeadroomCI), oracleChart(r))
		p(`<section><h2>Per category</h2>%s</section>`, metricsTable(r.Categories, "category"))
		if len(r.Durations) > 0 {
			p(`<section><h2>Per duration</h2>%s</section>`, metricsTable(r.Durations, "duration"))
		}
		var adj, rest []audit.Pair
		for _, q := range r.Pairs {
			if q.Adjacent {
				adj = append(adj, q)
			} else {
				rest = append(rest, q)
			}
		}
		p(`<section><h2>Pairs</h2><p class="lead">Every pair of configurations with different costs (equal costs are incomparable); adjacent cost levels first. McNemar's p is the exact two-sided binomial test of rescued against harmed.</p>%s`, pairsTable(adj))
		if len(rest) > 0 {
			p(`<details><summary>%d non-adjacent pairs</summary>%s</details>`, len(rest), pairsTable(rest))
		}
		p(`</section>`)
	}
	if cr := r.Cascade; cr != nil {
		warn := ""
		if u := cascadeUnparsed(r); u != "" {
			warn = `<div class="warn"><b>Warning:</b> the cascade's budgets hold unparsed answers (` + esc(u) + `): its accuracy and saving are partly the answer parser's.</div>`
		}
		p(`<section><h2>Confidence cascade</h2><p class="lead">Start at the smallest budget and escalate while the confidence is below τ; the curve sweeps τ over %d thresholds. Shared cost counts distinct frames decoded (%s).</p>%s%s%s</section>`,
			cr.TauCount, esc(cr.SharedCostBasis), warn, cascadeChart(cr), cascadeTables(cr))
	}
	if oc := r.OnlineCascade; oc != nil {
		p(`<section><h2>Online confidence cascade</h2><p class="lead">Run live by <code>framesweep sweep --cascade</code>: each item was asked at %v frames in turn while its confidence stayed below %.4g; frames decoded once per video and shared across steps. <code>framesweep cascade RUN --offline FULL_RUN</code> compares it with each fixed budget on the same items.</p>%s</section>`,
			oc.Budgets, oc.Threshold, onlineTable(oc))
	}
	interventions(&b, r)
	if oe := r.OpenEnded; oe != nil {
		openEndedHTML(&b, oe)
	}
	p(`<footer>framesweep audit · bootstrap: %d resamples, seed %d, %s · the same numbers as <code>framesweep audit --json</code></footer>`, r.Bootstrap.Resamples, r.Bootstrap.Seed, esc("SplitMix64"))
	p(`</main></body></html>`)
	_, err := io.WriteString(w, b.String())
	return err
}

// configLegend is the key from the charts' config labels to the config ids.
func configLegend(r *audit.Result) string {
	cs := mcConfigs(r)
	return legend(cs, configLabels(cs))
}

func cards(b *strings.Builder, r *audit.Result) {
	card := func(k, v, s string) {
		fmt.Fprintf(b, `<div class="card"><div class="k">%s</div><div class="v">%s</div><div class="s">%s</div></div>`, k, v, s)
	}
	b.WriteString(`<div class="cards">`)
	drop := "none dropped"
	if r.DroppedItems.Count > 0 {
		drop = fmt.Sprintf("%d dropped (missing configs)", r.DroppedItems.Count)
	}
	card("Paired items", fmt.Sprint(r.Items), drop)
	card("Best fixed", P(r.BestFixed), esc(r.BestFixedConfig))
	card("Oracle headroom", Plus(r.OracleHeadroom), "95% "+CI(r.OracleHeadroomCI))
	card("Visual confusion", Pct(r.VisualConfusionRate), "95% "+CI(r.VisualConfusionRateCI))
	if r.TextOverwriteRate != nil {
		card("Text overwrite", Pct(r.TextOverwriteRate), Pct(r.TextOverwriteRateOfTextCorrect)+" of text-correct")
	}
	if r.TerminalRegressionRate != nil {
		card("Terminal regression", Pct(r.TerminalRegressionRate), "wrong at "+esc(r.TerminalConfig)+", right cheaper")
	}
	card("Unstable items", Pct(r.UnstableRate), "not constant across configs")
	if r.SamplingRecoveryRate != nil {
		card("Sampling recovery", Pct(r.SamplingRecoveryRate), "of terminal regressions")
	}
	if r.Cascade != nil && r.Cascade.SharedCostSaving != nil {
		if cascadeUnparsed(r) != "" {
			card("Cascade saving", `<span class="bad">`+Pct(r.Cascade.SharedCostSaving)+"</span>", `<span class="bad">over unparsed answers: see the warning</span>`)
		} else {
			card("Cascade saving", Pct(r.Cascade.SharedCostSaving), "shared frames vs "+esc(r.Cascade.Reference))
		}
	}
	b.WriteString(`</div>`)
}

func metricsTable(ms map[string]*audit.Metrics, what string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<table><tr><th>%s</th><th>items</th><th>best fixed</th><th>oracle</th><th>headroom</th><th>95%% CI</th><th>confusion %%</th><th>text overwrite %%</th><th>terminal %%</th><th>unstable %%</th></tr>`, what)
	for _, k := range keysOf(ms) {
		m := ms[k]
		if m.Items == 0 {
			fmt.Fprintf(&b, `<tr><td>%s</td><td>0</td><td colspan="8" class="muted">no paired items (all dropped)</td></tr>`, esc(k))
			continue
		}
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%d</td><td>%s <span class="muted">%s</span></td><td>%s</td><td><b>%s</b></td><td class="muted">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			esc(k), m.Items, P(m.BestFixed), esc(m.BestFixedConfig), P(m.OracleAccuracy), P(m.OracleHeadroom), CI(m.OracleHeadroomCI),
			P(m.VisualConfusionRate), P(m.TextOverwriteRate), P(m.TerminalRegressionRate), P(m.UnstableRate))
	}
	b.WriteString(`</table>`)
	return b.String()
}

func pairsTable(ps []audit.Pair) string {
	var b strings.Builder
	b.WriteString(`<table><tr><th>from → to</th><th>adjacent</th><th>rescued</th><th>harmed</th><th>churn</th><th>net</th><th>state change %</th><th>McNemar p</th></tr>`)
	for _, p := range ps {
		adj := ""
		if p.Adjacent {
			adj = "✓"
		}
		fmt.Fprintf(&b, `<tr><td>%s → %s</td><td>%s</td><td class="ok">%d</td><td class="bad">%d</td><td>%d</td><td>%+.1f</td><td>%s</td><td>%s</td></tr>`,
			esc(p.From), esc(p.To), adj, p.Rescued, p.Harmed, p.Churn, p.Net, F1(p.StateChangeRate), PValue(p.McNemarP))
	}
	b.WriteString(`</table>`)
	return b.String()
}

func cascadeTables(cr *cascade.Result) string {
	var b strings.Builder
	lat := func(v *float64) string {
		if v == nil {
			return "–"
		}
		return fmt.Sprintf("%.3f", *v)
	}
	b.WriteString(`<table><tr><th>policy</th><th>accuracy</th><th>shared frames</th><th>latency s</th></tr>`)
	for _, bu := range cr.Budgets {
		fmt.Fprintf(&b, `<tr><td>fixed %s (%d frames)</td><td>%s</td><td>%s</td><td>%s</td></tr>`, esc(bu.Config), bu.Frames, F1(bu.Accuracy), F1(bu.SharedFramesCost), lat(bu.LatencyS))
	}
	if s := cr.Selected; s != nil {
		fmt.Fprintf(&b, `<tr><td><b>cascade τ = %.4g</b></td><td><b>%s</b></td><td><b>%s</b> <span class="%s">(%s)</span></td><td>%s`, s.Tau, F1(s.Accuracy), F1(s.SharedFramesCost), savingClass(cr.SharedCostSaving), Saving(cr.SharedCostSaving), lat(s.LatencyS))
		b.WriteString(`</td></tr>`)
	}
	if sl := cr.SelectedLatency; sl != nil {
		fmt.Fprintf(&b, `<tr><td>cascade by latency, τ = %.4g</td><td>%s</td><td>%s</td><td>%s`, sl.Tau, F1(sl.Accuracy), F1(sl.SharedFramesCost), lat(sl.LatencyS))
		if ls := cr.LatencySaving; ls != nil {
			fmt.Fprintf(&b, ` <span class="%s">(%s)</span>`, savingClass(ls), Saving(ls))
		}
		b.WriteString(`</td></tr>`)
	}
	if cf := cr.CrossFitted; cf != nil {
		fmt.Fprintf(&b, `<tr><td>cascade, %d-fold cross-fitted τ</td><td>%s</td><td>%s</td><td>%s</td></tr>`, cr.Folds, F1(cf.Accuracy), F1(cf.SharedFramesCost), lat(cf.LatencyS))
	}
	b.WriteString(`</table>`)
	if cr.Selected == nil {
		b.WriteString(`<div class="note">No threshold reaches the reference accuracy.</div>`)
	}
	if cr.SelectedLatency != nil {
		b.WriteString(`<p class="lead">Latencies are the records' per-budget seconds summed over the budgets tried (no frame sharing); an online cascade run measures the shared latency directly.</p>`)
	}
	if cr.Dropped > 0 {
		fmt.Fprintf(&b, `<div class="note">%s</div>`, esc(cr.DroppedReason))
	}
	return b.String()
}

func interventions(b *strings.Builder, r *audit.Result) {
	var parts []string
	if sr := r.SamplingRecovery; sr != nil {
		parts = append(parts, fmt.Sprintf(`<h3>Sampling intervention</h3><p>%d terminal regressions under %s at %s; %d (%s) are correct at the same budget under another policy (%s).</p>`,
			sr.TerminalRegressions, esc(sr.DefaultPolicy), esc(sr.TopConfig), sr.Recovered, Pct(sr.Rate), esc(strings.Join(sr.Alternatives, ", "))))
	}
	if len(r.IsoCompute) > 0 {
		var t strings.Builder
		t.WriteString(`<h3>Iso-compute groups (pixel cost within 5%)</h3><p class="lead">The same pixel budget spent differently (more frames or larger frames): compared here, not as steps of the accuracy curves.</p>` + isoChart(r) + `<table><tr><th>group</th><th style="text-align:left">config</th><th>pixels</th><th>accuracy</th><th>only this one right</th></tr>`)
		for gi, g := range r.IsoCompute {
			for i, c := range g.Configs {
				fmt.Fprintf(&t, `<tr><td>%d</td><td class="l">%s</td><td>%s</td><td>%s</td><td>%d</td></tr>`, gi+1, esc(c), humanCost(float64(g.Costs[i])), F1(g.Accuracy[c]), g.OnlyCorrect[c])
			}
			fmt.Fprintf(&t, `<tr><td>%d</td><td class="l"><b>group oracle</b></td><td></td><td><b>%s</b></td><td class="muted">+%s over best</td></tr>`, gi+1, F1(g.Oracle), F1(g.OracleGain))
		}
		t.WriteString(`</table>`)
		parts = append(parts, t.String())
	}
	if len(r.PipelineFlips) > 0 {
		var t strings.Builder
		t.WriteString(`<h3>Raw vs cached pipeline</h3><table><tr><th>raw → cached</th><th>flips</th><th>% items</th><th>raw only right</th><th>cached only right</th></tr>`)
		for _, f := range r.PipelineFlips {
			fmt.Fprintf(&t, `<tr><td>%s → %s</td><td>%d</td><td>%s</td><td>%d</td><td>%d</td></tr>`, esc(f.Raw), esc(f.Cached), f.Flips, F1(f.Rate), f.RawOK, f.CachOK)
		}
		t.WriteString(`</table>`)
		parts = append(parts, t.String())
	}
	if len(r.ProtocolAgreement) > 0 {
		var t strings.Builder
		t.WriteString(`<h3>Protocol agreement</h3><p class="lead">Budget ladders that differ in one factor only, over the same items and budgets: population metrics side by side and the agreement of the items' confusion tags (close metrics with a low κ: robust structure, protocol-sensitive labels).</p><table><tr>` + protocolHead + `</tr>`)
		for _, q := range r.ProtocolAgreement {
			t.WriteString(`<tr>` + protocolCells(q) + `</tr>`)
		}
		t.WriteString(`</table>`)
		parts = append(parts, t.String())
	}
	if lp := r.LetterPrior; lp != nil {
		var t strings.Builder
		t.WriteString(`<h3>Letter prior</h3><table><tr><th>distribution</th>`)
		for _, l := range lp.Letters {
			fmt.Fprintf(&t, `<th>%s</th>`, esc(l))
		}
		t.WriteString(`<th>TV distance to gold</th></tr><tr><td><b>gold</b></td>`)
		for _, l := range lp.Letters {
			fmt.Fprintf(&t, `<td>%s</td>`, F1(lp.Gold[l]))
		}
		t.WriteString(`<td></td></tr>`)
		for _, c := range r.MCConfigs {
			fmt.Fprintf(&t, `<tr><td>%s</td>`, esc(c))
			for _, l := range lp.Letters {
				fmt.Fprintf(&t, `<td>%s</td>`, F1(lp.Configs[c][l]))
			}
			fmt.Fprintf(&t, `<td><span class="bar" style="width:%.0fpx"></span>%s</td></tr>`, lp.TVDistance[c], F1(lp.TVDistance[c]))
		}
		t.WriteString(`</table>`)
		parts = append(parts, t.String())
	}
	if len(r.NoiseFloor) > 0 {
		var t strings.Builder
		t.WriteString(`<h3>Rerun noise floor</h3><table><tr><th>config</th><th>runs</th><th>mean churn</th><th>mean churn %</th><th>mean |Δscore|</th></tr>`)
		for _, n := range r.NoiseFloor {
			mc := "–"
			if n.MeanChurn != nil {
				mc = F1(*n.MeanChurn)
			}
			fmt.Fprintf(&t, `<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>`, esc(n.Config), len(n.Runs), mc, P(n.MeanChurnRate), P(n.MeanAbsScoreChange))
		}
		t.WriteString(`</table><p class="lead">Read budget-induced churn against this floor.</p>`)
		parts = append(parts, t.String())
	}
	if len(parts) > 0 {
		fmt.Fprintf(b, `<section><h2>Interventions and protocol checks</h2>%s</section>`, strings.Join(parts, ""))
	}
}

func openEndedHTML(b *strings.Builder, oe *audit.OpenEnded) {
	fmt.Fprintf(b, `<section><h2>Open-ended (Token-F1)</h2><p class="lead">%d items scored in every open-ended config. Best fixed %s (%s); per-item oracle %s; oracle gap <b>%s</b> points.</p><table><tr><th>config</th><th>mean score</th></tr>`,
		oe.Items, F1(oe.BestFixed), esc(oe.BestConfig), F1(oe.OracleMean), F1(oe.OracleGap))
	for _, c := range oe.Configs {
		fmt.Fprintf(b, `<tr><td>%s</td><td>%s</td></tr>`, esc(c), F1(oe.MeanScore[c]))
	}
	fmt.Fprintf(b, `</table><table><tr><th>from → to</th><th>mean change</th><th>regressed %% (ε = %.2f)</th><th>improved %%</th></tr>`, oe.Epsilon)
	for _, r := range oe.Regression {
		fmt.Fprintf(b, `<tr><td>%s → %s</td><td>%+.1f</td><td class="bad">%s</td><td class="ok">%s</td></tr>`, esc(r.From), esc(r.To), r.MeanChange, F1(r.RegressionRate), F1(r.ImprovedRate))
	}
	b.WriteString(`</table>`)
	for _, grp := range []struct {
		name string
		m    map[string]*audit.OEGroup
	}{{"category", oe.Categories}, {"duration", oe.Durations}} {
		if len(grp.m) == 0 {
			continue
		}
		fmt.Fprintf(b, `<table><tr><th>%s</th><th>items</th><th>best fixed</th><th>oracle</th><th>oracle gap</th></tr>`, grp.name)
		for _, k := range keysOf(grp.m) {
			g := grp.m[k]
			fmt.Fprintf(b, `<tr><td>%s</td><td>%d</td><td>%s <span class="muted">%s</span></td><td>%s</td><td><b>%s</b></td></tr>`, esc(k), g.Items, F1(g.BestFixed), esc(g.BestConfig), F1(g.OracleMean), F1(g.OracleGap))
		}
		b.WriteString(`</table>`)
	}
	b.WriteString(`</section>`)
}

func harnessTable(rows []harnessRow) string {
	var b strings.Builder
	b.WriteString(`<table><tr><th>config</th><th style="text-align:left">harness metric</th><th>harness</th><th>counted</th><th>left out</th><th>item-level, same records</th><th>paired accuracy</th><th>rescored</th><th style="text-align:left">by duration</th></tr>`)
	for _, h := range rows {
		note := ""
		if !h.complete {
			note = ` <span class="muted">(imported file; records since filtered)</span>`
		}
		fmt.Fprintf(&b, `<tr><td>%s</td><td class="l">%s</td><td><b>%s</b>%s</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%d</td><td class="l">%s</td></tr>`,
			esc(h.config), esc(h.metric), F2(h.value), note, h.counted, h.leftOut, F2(h.itemLevel), F2(h.paired), h.rescored, esc(h.byDuration))
	}
	b.WriteString(`</table>`)
	return b.String()
}

func onlineTable(oc *cascade.Online) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<table><tr><th>items</th><th>accuracy (final answers)</th><th>frames fed / item</th><th>distinct frames / item</th><th>answer s / item</th><th>with input builds s / item</th></tr><tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%.3f</td><td>%.3f</td></tr></table>`,
		oc.Items, F1(oc.Accuracy), F1(oc.MeanFramesFed), F1(oc.MeanFramesDistinct), oc.MeanLatencyS, oc.MeanWallS)
	b.WriteString(`<table><tr><th>stopped at</th><th>items</th></tr>`)
	for _, s := range oc.StoppedAt {
		fmt.Fprintf(&b, `<tr><td>%s (%d frames)</td><td>%d</td></tr>`, esc(s.Config), s.Budget, s.Items)
	}
	b.WriteString(`</table>`)
	if oc.First != nil {
		fmt.Fprintf(&b, `<p class="lead">The first budget, asked of every item, as a fixed budget: %s points (%s).</p>`, F1(oc.First.Accuracy), esc(oc.First.Config))
	}
	if oc.Unfinish > 0 || oc.Errors > 0 {
		fmt.Fprintf(&b, `<div class="note">%d items still escalating (an interrupted run), %d ended in an error record.</div>`, oc.Unfinish, oc.Errors)
	}
	return b.String()
}

// warnings writes the audit's warnings, before anything else of the report.
func warnings(b *strings.Builder, ws []string) {
	for _, w := range ws {
		fmt.Fprintf(b, `<div class="warn"><b>Warning:</b> %s</div>`, esc(w))
	}
}

// cascadeUnparsed lists the cascade's budgets that hold unparsed answers with their share ("" when
// none does).
func cascadeUnparsed(r *audit.Result) string {
	if r.Cascade == nil {
		return ""
	}
	return strings.Join(r.Cascade.UnparsedBudgets(), ", ")
}

// unparsedTable is every multiple-choice config's unparsed answers: count, share, the accuracy as
// counted (unparsed wrong) and over the parsed answers alone.
func unparsedTable(r *audit.Result) string {
	u := r.Unparsed
	var b strings.Builder
	b.WriteString(`<table><tr><th>configuration</th><th>answers</th><th>unparsed</th><th>share %</th><th>accuracy</th><th>accuracy over parsed</th></tr>`)
	for _, id := range r.MCConfigs {
		cls := ""
		if u.Share[id] >= audit.MostlyUnparsed {
			cls = ` class="bad"`
		}
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%d</td><td%s>%d</td><td%s><b>%s</b></td><td>%s</td><td>%s</td></tr>`,
			esc(id), r.Items, cls, u.ByConfig[id], cls, F1(u.Share[id]), F1(r.Accuracy[id]), P(u.AccuracyParsed[id]))
	}
	b.WriteString(`</table>`)
	if len(u.Flows) > 0 {
		b.WriteString(`<p class="lead">Flows between adjacent configurations that go from or to an unparsed answer:</p><table><tr><th>from → to</th><th>rescued from unparsed</th><th>harmed into unparsed</th></tr>`)
		for _, f := range u.Flows {
			fmt.Fprintf(&b, `<tr><td>%s → %s</td><td>%d</td><td>%d</td></tr>`, esc(f.From), esc(f.To), f.Rescued, f.Harmed)
		}
		b.WriteString(`</table>`)
	}
	return b.String()
}
