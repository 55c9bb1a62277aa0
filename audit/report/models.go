package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/dataset"
)

// modelColors tell the models apart on the comparison charts.
var modelColors = []string{"#3b5bdb", "#d9480f", "#2b8a3e", "#9c36b5", "#1098ad", "#e67700", "#c2255c", "#5c940d"}

func modelColor(i int) string { return modelColors[i%len(modelColors)] }

// F3 formats a nullable ratio (Jaccard, κ) with three decimals; "–" for null.
func F3(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.3f", *v)
}

// modelName shows a model; records that named none are "(unnamed)".
func modelName(m string) string {
	if m == "" {
		return "(unnamed)"
	}
	return m
}

// matchedConfigs are the matched grid's configs with their metadata (from the first model that has
// them), in the grid's order.
func matchedConfigs(r *audit.ModelsResult) []*dataset.Config {
	var out []*dataset.Config
	for _, id := range r.MatchedGrid.Configs {
		for _, m := range r.Models {
			if res := r.PerModel[m]; res != nil {
				if c := findConfig(res, id); c != nil && c.Kind == "multiple_choice" {
					out = append(out, c)
					break
				}
			}
		}
	}
	return out
}

func findConfig(r *audit.Result, id string) *dataset.Config {
	for _, c := range r.Configs {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// ModelsHTML writes the audit of several models as one self-contained HTML document: the matched
// grid, the models side by side (accuracy chart, the study's table, churn), the cross-model
// structure, protocol agreement, and every model's own charts.
func ModelsHTML(w io.Writer, r *audit.ModelsResult, opt Options) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	title := esc(opt.title())
	p(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">`)
	p(`<title>%s</title><style>%s</style></head><body>`, title, css)
	p(`<header><h1>%s</h1><p>Item-level scaling audit of %d models · matched grid of %d configurations · %d items`, title, len(r.Models), len(r.MatchedGrid.Configs), r.MatchedGrid.Items)
	if len(opt.Sources) > 0 {
		p(` · %s`, esc(strings.Join(opt.Sources, ", ")))
	}
	p(`</p></header><main>`)
	modelsCards(&b, r)
	warnings(&b, r.Warnings)
	for _, n := range r.Notes {
		p(`<div class="note">%s</div>`, esc(n))
	}
	for _, u := range modelsUndefined(r) {
		p(`<div class="note">undefined (—) %s</div>`, esc(u))
	}
	p(`<section><h2>Matched grid</h2><p class="lead">The configurations every model answered, less those beyond a model's context ceiling (marked, not an error), over the items every model answered in each of them. Every number below is on this grid.</p>%s</section>`, matchedGridHTML(r))
	if cs := matchedConfigs(r); len(cs) > 0 {
		p(`<section><h2>Accuracy against frames, by model</h2><p class="lead">One line per model against frames over the matched grid, one chart per ladder (sampling, size, pipeline) when there are several, the text-only point first; the dashed line of the same colour is that model's item-level oracle.</p>%s%s%s</section>`,
			modelsLegend(r), modelsAccuracyChart(r, cs), legend(cs, configLabels(cs)))
	}
	p(`<section><h2>The models side by side</h2><p class="lead">Per model, split (the records' task; "all" pools them) and duration group: best fixed configuration, item-level oracle, headroom, visual confusion, text overwrite of all items and of the text-correct ones, terminal regression, unstable items, and churn summed over the adjacent transitions.</p>%s</section>`, studyTable(r))
	if len(r.Churn) > 0 {
		p(`<section><h2>Churn per transition</h2><p class="lead">Rescued and harmed items of every adjacent step of the matched grid, per model: the flows each aggregate step hides.</p>%s</section>`, churnTable(r))
	}
	if cm := r.CrossModel; cm != nil && cm.Items > 0 {
		p(`<section><h2>Cross-model structure</h2><p class="lead">Which items each model finds confusing (right at a cheaper configuration, wrong at a costlier one), over the %d matched items: in how many models each item is confused, and for every two models the Jaccard of their confused sets (beside what independent models with the same rates would give), Cohen's κ of the tag, and how often their trajectories agree.</p>%s%s</section>`,
			cm.Items, confusedInKChart(cm, len(r.Models)), crossPairsTable(cm))
	}
	if l := confusedInKList(r, opt); l != nil {
		p(`<section><h2>The items confused across models</h2><p class="lead">The items confused in k of the %d models, the highest k first (the first %d; each model's own lists are in its section below).</p>%s</section>`,
			len(r.Models), MaxListed, itemListsHTML([]itemList{*l}, nil))
	}
	if t := protocolModelsTable(r); t != "" {
		p(`<section><h2>Protocol agreement</h2><p class="lead">Budget ladders that differ in one factor only (pipeline, sampling, resolution), per model: population metrics side by side, and the agreement of the items' confusion tags. Close metrics with a low κ is robust structure with protocol-sensitive labels.</p>%s</section>`, t)
	}
	for i, m := range r.Models {
		res := r.PerModel[m]
		if res == nil || res.Items == 0 {
			continue
		}
		items := ""
		if ls := itemLists(res, itemSet(opt, m, res), opt.Questions); len(ls) > 0 {
			items = `<details><summary>the items behind its rates</summary>` + itemListsHTML(ls, verdictOrder(res)) + `</details>`
		}
		p(`<section><h2><span class="swatch" style="background:%s"></span>%s: the model's own audit</h2><details><summary>charts (accuracy and flows, transitions, trajectories, oracle)</summary>%s%s%s%s%s</details>%s</section>`,
			modelColor(i), esc(modelName(m)), accuracyChart(res), configLegend(res), flowChart(res), heatmap(res), oracleChart(res), items)
	}
	p(`<footer>framesweep audit · %d models · the same numbers as <code>framesweep audit --json</code></footer>`, len(r.Models))
	p(`</main></body></html>`)
	_, err := io.WriteString(w, b.String())
	return err
}

func modelsCards(b *strings.Builder, r *audit.ModelsResult) {
	card := func(k, v, s string) {
		fmt.Fprintf(b, `<div class="card"><div class="k">%s</div><div class="v">%s</div><div class="s">%s</div></div>`, k, v, s)
	}
	b.WriteString(`<div class="cards">`)
	card("Models", fmt.Sprint(len(r.Models)), esc(strings.Join(modelNames(r.Models), ", ")))
	card("Matched items", fmt.Sprint(r.MatchedGrid.Items), fmt.Sprintf("%d dropped", r.MatchedGrid.Dropped))
	card("Matched configs", fmt.Sprint(len(r.MatchedGrid.Configs)), fmt.Sprintf("%d over a ceiling", len(r.MatchedGrid.OverCeiling)))
	if cm := r.CrossModel; cm != nil && cm.Items > 0 {
		card("Confused sets", F3(cm.MeanJaccard), "mean Jaccard of two models; mean κ "+F3(cm.MeanKappa))
		if why := cm.Undefined["confused_in_k"]; why != "" {
			card("Confused in all", "—", esc(why))
		} else if n := len(cm.ConfusedInK); n > 0 {
			card("Confused in all", fmt.Sprint(cm.ConfusedInK[n-1].Items), fmt.Sprintf("of %d items; in none: %d", cm.Items, cm.ConfusedInK[0].Items))
		}
	}
	b.WriteString(`</div>`)
}

// modelsUndefined are every model's undefined metrics with their reasons, each naming its model.
func modelsUndefined(r *audit.ModelsResult) []string {
	var out []string
	for _, m := range r.Models {
		if res := r.PerModel[m]; res != nil {
			for _, u := range UndefinedLines(res.Undefined) {
				out = append(out, modelName(m)+": "+u)
			}
		}
	}
	return out
}

func modelNames(ms []string) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = modelName(m)
	}
	return out
}

func modelsLegend(r *audit.ModelsResult) string {
	var b strings.Builder
	b.WriteString(`<p class="models">`)
	for i, m := range r.Models {
		fmt.Fprintf(&b, `<span class="model"><span class="swatch" style="background:%s"></span>%s</span>`, modelColor(i), esc(modelName(m)))
	}
	b.WriteString(`</p>`)
	return b.String()
}

func matchedGridHTML(r *audit.ModelsResult) string {
	mg := r.MatchedGrid
	var b strings.Builder
	fmt.Fprintf(&b, `<p><b>%s</b></p>`, esc(strings.Join(mg.Configs, " · ")))
	b.WriteString(`<table><tr><th>model</th><th>answered records</th><th>error records</th><th>context (tokens)</th><th>--ceiling (frames)</th><th style="text-align:left">over the context</th><th style="text-align:left">weights sha256</th></tr>`)
	for _, m := range r.Models {
		mi := r.ModelInfo[m]
		ctx, ceil := "–", "–"
		if mi.ContextTokens != nil {
			ctx = fmt.Sprint(*mi.ContextTokens)
		}
		if mi.Ceiling != nil {
			ceil = fmt.Sprint(*mi.Ceiling)
		}
		wt := mi.WeightsSHA256
		if len(wt) > 12 {
			wt = wt[:12] + "…"
		}
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td class="l">%s</td><td class="l"><code>%s</code></td></tr>`,
			esc(modelName(m)), mi.Records, mi.ErrorRecords, ctx, ceil, esc(strings.Join(mi.OverContext, ", ")), esc(wt))
	}
	b.WriteString(`</table>`)
	if len(mg.LeftOut) > 0 {
		b.WriteString(`<table><tr><th>left out of the grid</th><th style="text-align:left">missing from</th><th style="text-align:left">beyond the ceiling of</th></tr>`)
		for _, lo := range mg.LeftOut {
			fmt.Fprintf(&b, `<tr><td>%s</td><td class="l">%s</td><td class="l">%s</td></tr>`, esc(lo.Config), esc(strings.Join(modelNames(lo.Missing), ", ")), esc(strings.Join(modelNames(lo.OverCeiling), ", ")))
		}
		b.WriteString(`</table>`)
	}
	// One note per model and reason: the configs beyond that ceiling.
	var order []string
	group := map[string][]string{}
	for _, m := range mg.OverCeiling {
		why := "its runtime refused their prompts as longer than its context"
		if m.Source == "context" && m.Limit != nil {
			why = fmt.Sprintf("its runtime refused their prompts as longer than its %d-token context", *m.Limit)
		} else if m.Source == "ceiling" && m.Limit != nil {
			why = fmt.Sprintf("more frames than the %d-frame ceiling given with --ceiling", *m.Limit)
		}
		k := modelName(m.Model) + "\x00" + why
		if _, ok := group[k]; !ok {
			order = append(order, k)
		}
		group[k] = append(group[k], m.Config)
	}
	for _, k := range order {
		model, why, _ := strings.Cut(k, "\x00")
		fmt.Fprintf(&b, `<div class="note">Beyond the ceiling of %s (%s): %s.</div>`, esc(model), esc(why), esc(strings.Join(group[k], ", ")))
	}
	if mg.Dropped > 0 {
		fmt.Fprintf(&b, `<div class="note">%d of %d items lack an answer of some model in some matched configuration and are left out (e.g. %s).</div>`, mg.Dropped, mg.TotalItems, esc(strings.Join(mg.Examples, ", ")))
	}
	return b.String()
}

// confusedInKChart: items confused in exactly k of the M models, k = 0…M.
func confusedInKChart(cm *audit.CrossModel, models int) string {
	if why := cm.Undefined["confused_in_k"]; why != "" {
		return `<div class="note">Confused in k models: — (undefined: ` + esc(why) + `)</div>`
	}
	W, H, left, bottom := 1040.0, 240.0, 56.0, 44.0
	maxN := 1
	for _, k := range cm.ConfusedInK {
		maxN = max(maxN, k.Items)
	}
	step := (W - left - 24) / float64(len(cm.ConfusedInK))
	y := func(v float64) float64 { return 16 + (1-v/float64(maxN))*(H-16-bottom) }
	s := openSVG(W, H, "items confused in k of the models")
	s.f(`<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle" class="axis">items</text>`, (H-bottom)/2)
	for i, k := range cm.ConfusedInK {
		xc := left + (float64(i)+0.5)*step
		bw := math.Min(80, step*0.6)
		fill := colBadSoft
		if k.K > 0 {
			fill = colBad
		}
		s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="%s"><title>confused in %d of %d models: %d items</title></rect>`, xc-bw/2, y(float64(k.Items)), bw, H-bottom-y(float64(k.Items)), fill, k.K, models, k.Items)
		s.text(xc, y(float64(k.Items))-6, "middle", "val", fmt.Sprintf("%d (%s)", k.Items, Pct(k.Rate)))
		s.text(xc, H-bottom+18, "middle", "cfg", fmt.Sprintf("%d of %d", k.K, models))
	}
	s.text(left, H-6, "start", "tick", "models in which the item is confused")
	return s.close()
}

func crossPairsTable(cm *audit.CrossModel) string {
	var b strings.Builder
	b.WriteString(`<table><tr><th>models</th><th>confused A</th><th>confused B</th><th>both</th><th>Jaccard</th><th>Jaccard if independent</th><th>κ</th><th>identical trajectories %</th><th>verdict agreement %</th></tr>`)
	for _, p := range cm.Pairs {
		c := p.Confused
		if c == nil { // confusion undefined: no order over the configs
			fmt.Fprintf(&b, `<tr><td>%s · %s</td><td colspan="6" class="muted">— %s</td><td>%s</td><td>%s</td></tr>`,
				esc(modelName(p.A)), esc(modelName(p.B)), esc(cm.Undefined["pairs.confused"]), P(p.IdenticalRate), P(p.VerdictAgreement))
			continue
		}
		fmt.Fprintf(&b, `<tr><td>%s · %s</td><td>%d</td><td>%d</td><td>%d</td><td><b>%s</b></td><td class="muted">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			esc(modelName(p.A)), esc(modelName(p.B)), c.A, c.B, c.Both, F3(c.Jaccard), F3(c.JaccardIndependent), F3(c.Kappa), P(p.IdenticalRate), P(p.VerdictAgreement))
	}
	b.WriteString(`</table>`)
	return b.String()
}

func studyTable(r *audit.ModelsResult) string {
	var b strings.Builder
	b.WriteString(`<table><tr><th>model</th><th>split</th><th>duration</th><th>items</th><th>best fixed</th><th>oracle</th><th>headroom</th><th>95% CI</th><th>confusion %</th><th>text overwrite %</th><th>of text-correct %</th><th>terminal %</th><th>unstable %</th><th>churn</th><th>state change %</th></tr>`)
	for _, row := range r.Table {
		churn := "–"
		if row.Churn != nil {
			churn = fmt.Sprint(*row.Churn)
		}
		kind := ""
		if row.Kind == "open_ended" {
			kind = ` <span class="muted">(Token-F1; headroom = oracle gap)</span>`
		}
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%s%s</td><td>%s</td><td>%d</td><td>%s <span class="muted">%s</span></td><td>%s</td><td><b>%s</b></td><td class="muted">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			esc(modelName(row.Model)), esc(row.Split), kind, esc(row.Duration), row.Items, P(row.BestFixed), esc(row.BestFixedConfig), P(row.Oracle), P(row.OracleHeadroom), CI(row.OracleHeadroomCI),
			P(row.VisualConfusionRate), P(row.TextOverwriteRate), P(row.TextOverwriteRateOfTextCorrect), P(row.TerminalRegressionRate), P(row.UnstableRate), churn, P(row.StateChangeRate))
	}
	b.WriteString(`</table>`)
	return b.String()
}

func churnTable(r *audit.ModelsResult) string {
	var b strings.Builder
	b.WriteString(`<table><tr><th>transition</th>`)
	for _, m := range r.Models {
		fmt.Fprintf(&b, `<th>%s: +rescued −harmed (net)</th>`, esc(modelName(m)))
	}
	b.WriteString(`</tr>`)
	for _, c := range r.Churn {
		fmt.Fprintf(&b, `<tr><td>%s → %s</td>`, esc(c.From), esc(c.To))
		for _, m := range r.Models {
			if p, ok := c.Models[m]; ok {
				fmt.Fprintf(&b, `<td><span class="ok">+%d</span> <span class="bad">−%d</span> (%+.1f)</td>`, p.Rescued, p.Harmed, p.Net)
			} else {
				b.WriteString(`<td>–</td>`)
			}
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</table>`)
	return b.String()
}

// protocolModelsTable lists every model's protocol pairs.
func protocolModelsTable(r *audit.ModelsResult) string {
	var rows []string
	for _, m := range r.Models {
		if res := r.PerModel[m]; res != nil {
			for _, p := range res.ProtocolAgreement {
				rows = append(rows, "<tr><td>"+esc(modelName(m))+"</td>"+protocolCells(p)+"</tr>")
			}
		}
	}
	if len(rows) == 0 {
		return ""
	}
	return `<table><tr><th>model</th>` + protocolHead + `</tr>` + strings.Join(rows, "") + `</table>`
}

const protocolHead = `<th>factor</th><th style="text-align:left">A</th><th style="text-align:left">B</th><th>budgets</th><th>headroom A / B</th><th>confusion % A / B</th><th>confused κ</th><th>Jaccard</th><th>tag flips %</th><th>verdict flips %</th>`

func protocolCells(p audit.ProtocolPair) string {
	var bs []string
	for _, n := range p.Budgets {
		bs = append(bs, fmt.Sprint(n))
	}
	return fmt.Sprintf(`<td>%s</td><td class="l">%s</td><td class="l">%s</td><td>%s</td><td>%s / %s</td><td>%s / %s</td><td><b>%s</b></td><td>%s</td><td>%s</td><td>%s</td>`,
		esc(p.Factor), esc(p.A), esc(p.B), strings.Join(bs, ", "), P(p.MetricsA.OracleHeadroom), P(p.MetricsB.OracleHeadroom),
		P(p.MetricsA.VisualConfusionRate), P(p.MetricsB.VisualConfusionRate), F3(p.Confused.Kappa), F3(p.Confused.Jaccard), P(p.Confused.FlipRate), P(p.FlipRate))
}

// ModelsMarkdown writes the multi-model audit's tables as Markdown.
func ModelsMarkdown(w io.Writer, r *audit.ModelsResult, opt Options) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	mg := r.MatchedGrid
	p("# %s\n\n%d models (%s); matched grid: %s; %d items (%d dropped).\n\n", mdEsc(opt.title()), len(r.Models), mdEsc(strings.Join(modelNames(r.Models), ", ")),
		mdEsc(strings.Join(mg.Configs, ", ")), mg.Items, mg.Dropped)
	for _, w := range r.Warnings {
		p("> **Warning:** %s\n\n", w)
	}
	for _, n := range r.Notes {
		p("> %s\n\n", mdEsc(n))
	}
	for _, u := range modelsUndefined(r) {
		p("> undefined (—) %s\n\n", mdEsc(u))
	}
	if len(mg.OverCeiling) > 0 {
		p("## Over a ceiling\n\n| model | config | frames | source | limit |\n|---|---|---|---|---|\n")
		for _, m := range mg.OverCeiling {
			p("| %s | %s | %s | %s | %s |\n", mdEsc(modelName(m.Model)), mdEsc(m.Config), intOr(m.Frames), m.Source, intOr(m.Limit))
		}
		p("\n")
	}
	p("## The models side by side\n\n| model | split | duration | items | best fixed | oracle | headroom | confusion %% | text overwrite %% | of text-correct %% | terminal %% | unstable %% | churn |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.Table {
		churn := "–"
		if row.Churn != nil {
			churn = fmt.Sprint(*row.Churn)
		}
		split := row.Split
		if row.Kind == "open_ended" {
			split += " (Token-F1)"
		}
		p("| %s | %s | %s | %d | %s (%s) | %s | %s %s | %s | %s | %s | %s | %s | %s |\n", mdEsc(modelName(row.Model)), mdEsc(split), mdEsc(row.Duration), row.Items,
			P(row.BestFixed), mdEsc(row.BestFixedConfig), P(row.Oracle), P(row.OracleHeadroom), CI(row.OracleHeadroomCI), P(row.VisualConfusionRate),
			P(row.TextOverwriteRate), P(row.TextOverwriteRateOfTextCorrect), P(row.TerminalRegressionRate), P(row.UnstableRate), churn)
	}
	if len(r.Churn) > 0 {
		p("\n## Churn per transition\n\n| transition |")
		for _, m := range r.Models {
			p(" %s |", mdEsc(modelName(m)))
		}
		p("\n|---|%s\n", strings.Repeat("---|", len(r.Models)))
		for _, c := range r.Churn {
			p("| %s → %s |", mdEsc(c.From), mdEsc(c.To))
			for _, m := range r.Models {
				if q, ok := c.Models[m]; ok {
					p(" +%d −%d (%+.1f) |", q.Rescued, q.Harmed, q.Net)
				} else {
					p(" – |")
				}
			}
			p("\n")
		}
	}
	if cm := r.CrossModel; cm != nil && cm.Items > 0 {
		p("\n## Cross-model structure\n\n%d items. Confused in k models:", cm.Items)
		if why := cm.Undefined["confused_in_k"]; why != "" {
			p(" — (undefined: %s)", MarkdownText(why))
		}
		for _, k := range cm.ConfusedInK {
			p(" %d: %d (%s);", k.K, k.Items, Pct(k.Rate))
		}
		p("\n\n| models | confused A | confused B | both | Jaccard | Jaccard if independent | κ | identical trajectories %% | verdict agreement %% |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, q := range cm.Pairs {
			c := q.Confused
			if c == nil {
				p("| %s · %s | — | — | — | — | — | — | %s | %s |\n", mdEsc(modelName(q.A)), mdEsc(modelName(q.B)), P(q.IdenticalRate), P(q.VerdictAgreement))
				continue
			}
			p("| %s · %s | %d | %d | %d | %s | %s | %s | %s | %s |\n", mdEsc(modelName(q.A)), mdEsc(modelName(q.B)), c.A, c.B, c.Both, F3(c.Jaccard), F3(c.JaccardIndependent), F3(c.Kappa), P(q.IdenticalRate), P(q.VerdictAgreement))
		}
	}
	if l := confusedInKList(r, opt); l != nil {
		p("\n## The items confused across models\n\nThe items confused in k of the %d models, the highest k first (the first %d).\n", len(r.Models), MaxListed)
		mdItemLists(p, []itemList{*l}, nil)
	}
	for _, m := range r.Models {
		res := r.PerModel[m]
		if ls := itemLists(res, itemSet(opt, m, res), opt.Questions); len(ls) > 0 && res.Items > 0 {
			p("\n## %s: the items behind its rates\n", mdEsc(modelName(m)))
			mdItemLists(p, ls, verdictOrder(res))
		}
	}
	var proto []string
	for _, m := range r.Models {
		if res := r.PerModel[m]; res != nil {
			for _, q := range res.ProtocolAgreement {
				proto = append(proto, "| "+mdEsc(modelName(m))+" "+mdProtocolRow(q))
			}
		}
	}
	if len(proto) > 0 {
		p("\n## Protocol agreement\n\n| model | factor | A | B | budgets | headroom A / B | confusion %% A / B | κ | Jaccard | tag flips %% | verdict flips %% |\n|---|---|---|---|---|---|---|---|---|---|---|\n%s\n", strings.Join(proto, "\n"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdProtocolRow(q audit.ProtocolPair) string {
	var bs []string
	for _, n := range q.Budgets {
		bs = append(bs, fmt.Sprint(n))
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s / %s | %s / %s | %s | %s | %s | %s |", q.Factor, mdEsc(q.A), mdEsc(q.B), strings.Join(bs, ", "),
		P(q.MetricsA.OracleHeadroom), P(q.MetricsB.OracleHeadroom), P(q.MetricsA.VisualConfusionRate), P(q.MetricsB.VisualConfusionRate),
		F3(q.Confused.Kappa), F3(q.Confused.Jaccard), P(q.Confused.FlipRate), P(q.FlipRate))
}

func intOr(p *int) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprint(*p)
}
