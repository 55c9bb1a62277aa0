package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/dataset"
)

// seriesPt is one point of a curve: its x position (curves.xIndex), its accuracy and its hover title.
type seriesPt struct {
	x      int
	y      float64
	title  string
	filled bool // the best fixed configuration
}

// series is one curve of a line chart.
type series struct {
	name, color string
	pts         []seriesPt
}

// stepBar is one step of one ladder under the curves: the items it rescued (up) and harmed (down).
type stepBar struct {
	x0, x1          int // the step's ends on the x axis
	rescued, harmed int
	color           string // "" draws rescued green and harmed red (one curve)
	title           string
}

// refLine is a dashed horizontal line (an oracle), labelled in the right margin when label is set.
type refLine struct {
	y                   float64
	color, label, title string
}

// lineSpec is a chart of curves over categorical x positions, with the step bars under it when bars
// are given.
type lineSpec struct {
	aria   string
	xs     []string
	series []series
	refs   []refLine
	values bool // value labels above the points (one curve)
	bars   []stepBar
}

// lineChart draws spec: accuracy curves against frames (text first), the oracle lines, and the bars
// of each ladder's steps grouped at their midpoints (the steps of several ladders side by side).
func lineChart(spec lineSpec) string {
	if len(spec.xs) == 0 || len(spec.series) == 0 {
		return ""
	}
	W, left, right := 1040.0, 56.0, 96.0
	topH, gap, barH := 230.0, 40.0, 150.0
	if len(spec.bars) == 0 {
		gap, barH = 0, 0
	}
	step := (W - left - right) / float64(len(spec.xs))
	labelsY := 20 + topH + gap + barH + 30
	H := labelsY + 32
	x := func(j float64) float64 { return left + (j+0.5)*step }
	lo, hi := 100.0, 0.0
	for _, s := range spec.series {
		for _, p := range s.pts {
			lo, hi = math.Min(lo, p.y), math.Max(hi, p.y)
		}
	}
	for _, r := range spec.refs {
		hi = math.Max(hi, r.y)
	}
	lo, hi = math.Max(0, math.Floor(lo/10)*10-5), math.Min(100, math.Ceil(hi/10)*10+5)
	if hi-lo < 10 {
		hi = math.Min(100, lo+10)
		lo = math.Min(lo, hi-10)
	}
	y := func(v float64) float64 { return 20 + topH - (v-lo)/(hi-lo)*topH }
	s := openSVG(W, H, spec.aria)
	for v := math.Ceil(lo/10) * 10; v <= hi+1e-9; v += 10 {
		s.f(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/>`, left, W-right, y(v), y(v))
		s.text(left-8, y(v)+4, "end", "tick", fmt.Sprintf("%.0f", v))
	}
	s.f(`<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle" class="axis">accuracy (points)</text>`, 20+topH/2)
	for _, r := range spec.refs {
		ry := y(r.y)
		s.f(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="6 4"><title>%s</title></line>`, left, W-right, ry, ry, r.color, esc(r.title))
		if r.label != "" {
			s.text(W-right+6, ry+4, "start", "lbl ok", esc(r.label))
		}
	}
	// Curves that meet are drawn a few pixels apart (the shared text point excepted), so that none
	// hides another.
	px := func(i int, p seriesPt) float64 {
		if p.x == 0 && spec.xs[0] == "text" {
			return x(0)
		}
		return x(float64(p.x)) + (float64(i)-float64(len(spec.series)-1)/2)*3
	}
	for i, sr := range spec.series {
		var pts []string
		for _, p := range sr.pts {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(i, p), y(p.y)))
		}
		s.f(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2.5" stroke-linejoin="round"><title>%s</title></polyline>`, strings.Join(pts, " "), sr.color, esc(sr.name))
	}
	for i, sr := range spec.series {
		for _, p := range sr.pts {
			fill := "#fff"
			if p.filled {
				fill = sr.color
			}
			s.f(`<circle cx="%.1f" cy="%.1f" r="5" fill="%s" stroke="%s" stroke-width="2.5"><title>%s</title></circle>`, px(i, p), y(p.y), fill, sr.color, esc(p.title))
			if spec.values && step >= textW("100.0", valCharW)+6 {
				s.text(x(float64(p.x)), y(p.y)-12, "middle", "val", F1(p.y))
			}
		}
	}
	if len(spec.bars) > 0 {
		stepBars(s, spec.bars, x, step, 20+topH+gap, barH, left, W-right)
	}
	for j, l := range spec.xs {
		s.text(x(float64(j)), labelsY, "middle", "cfg", esc(l))
	}
	s.text((left+W-right)/2, labelsY+24, "middle", "axis", "frames (text: the question alone)")
	return s.close()
}

// stepBars draws the bars of bars in the band [top, top+barH], each step left of the column it
// leads to (the steps into one budget side by side), rescued up and harmed down, with their counts
// and net when there is room.
func stepBars(s *svgB, bars []stepBar, x func(float64) float64, step, top, barH, x0, x1 float64) {
	base := top + barH/2
	maxF := 1
	groups := map[int][]stepBar{}
	var mids []int
	for _, b := range bars {
		maxF = max(maxF, b.rescued, b.harmed)
		m := b.x1 // the steps into one budget side by side, left of its column
		if groups[m] == nil {
			mids = append(mids, m)
		}
		groups[m] = append(groups[m], b)
	}
	sort.Ints(mids)
	scale := (barH/2 - 14) / float64(maxF)
	s.f(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`, x0, x1, base, base, colMuted)
	s.f(`<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle" class="axis">items</text>`, base)
	s.text(x0-8, base-barH/2+10, "end", "tick ok", "rescued")
	s.text(x0-8, base+barH/2-2, "end", "tick bad", "harmed")
	for _, m := range mids {
		g := groups[m]
		xm := x(float64(m) - 0.5)
		bw := math.Min(34, step*0.7/float64(len(g)))
		for i, b := range g {
			bx := xm + (float64(i)-float64(len(g)-1)/2)*bw*1.15
			up, down, op := colOK, colBad, ""
			if b.color != "" {
				up, down, op = b.color, b.color, ` fill-opacity="0.45"`
			}
			hr, hh := float64(b.rescued)*scale, float64(b.harmed)*scale
			s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="2" fill="%s"><title>%s: %d rescued</title></rect>`, bx-bw/2, base-hr, bw, hr, up, esc(b.title), b.rescued)
			s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="2" fill="%s"%s><title>%s: %d harmed</title></rect>`, bx-bw/2, base, bw, hh, down, op, esc(b.title), b.harmed)
			if n := fmt.Sprintf("+%d", max(b.rescued, b.harmed)); bw*1.15 >= textW(n, valCharW)+4 {
				s.text(bx, base-hr-5, "middle", "val ok", fmt.Sprintf("+%d", b.rescued))
				s.text(bx, base+hh+14, "middle", "val bad", fmt.Sprintf("−%d", b.harmed))
			}
		}
		if len(g) > 1 {
			continue
		}
		// The bars count items, so the net under them does too (the curve above shows the points).
		net := g[0].rescued - g[0].harmed
		lbl := fmt.Sprintf("net %+d items", net)
		if step < textW(lbl, tickCharW)+6 {
			lbl = fmt.Sprintf("net %+d", net)
		}
		if step >= textW(lbl, tickCharW)+6 {
			s.text(xm, base+barH/2+16, "middle", "tick", lbl)
		}
	}
}

// accuracyChart: one curve per ladder (sampling, size, pipeline) of accuracy against frames, the
// text-only point shared by all, the oracle line, and under the curves each ladder's steps: the items
// each rescued and harmed. A change of size, sampling or pipeline is no step.
func accuracyChart(r *audit.Result) string {
	if r.Items == 0 {
		return ""
	}
	cv := curvesOf(mcConfigs(r))
	if len(cv.ladders) == 0 {
		return ""
	}
	one := len(cv.ladders) == 1
	spec := lineSpec{aria: "accuracy against frames, one curve per ladder, with the items each step rescued and harmed", xs: cv.xLabels(), values: one}
	if r.OracleAccuracy != nil {
		spec.refs = []refLine{{y: *r.OracleAccuracy, color: colOK, label: "oracle " + F1(*r.OracleAccuracy), title: "item-level oracle"}}
	}
	for i, l := range cv.ladders {
		col := modelColor(i)
		if one {
			col = colAccent
		}
		sr := series{name: l.name, color: col}
		steps := cv.steps(l)
		for k, c := range steps {
			a := r.Accuracy[c.ID]
			sr.pts = append(sr.pts, seriesPt{x: cv.xIndex(c), y: a, title: c.ID + ": " + F1(a), filled: c.ID == r.BestFixedConfig})
			if k == 0 {
				continue
			}
			if p := pairOf(r, steps[k-1].ID, c.ID); p != nil {
				b := stepBar{x0: cv.xIndex(steps[k-1]), x1: cv.xIndex(c), rescued: p.Rescued, harmed: p.Harmed, title: l.name + ": " + p.From + " → " + p.To}
				if !one {
					b.color = col
				}
				spec.bars = append(spec.bars, b)
			}
		}
		spec.series = append(spec.series, sr)
	}
	// Text-only configs beyond the one every curve starts from are drawn as points of their own.
	if len(cv.text) > 1 {
		sr := series{name: "text only", color: colMuted}
		for _, c := range cv.text {
			sr.pts = append(sr.pts, seriesPt{x: 0, y: r.Accuracy[c.ID], title: c.ID + ": " + F1(r.Accuracy[c.ID])})
		}
		spec.series = append(spec.series, sr)
	}
	return seriesLegend(spec.series, one) + lineChart(spec)
}

// seriesLegend names the curves by colour above a chart (none for a single curve).
func seriesLegend(ss []series, one bool) string {
	if one {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<p class="models">`)
	for _, s := range ss {
		fmt.Fprintf(&b, `<span class="model"><span class="swatch" style="background:%s"></span>%s</span>`, s.color, esc(s.name))
	}
	b.WriteString(`</p>`)
	return b.String()
}

// modelsAccuracyChart draws each model's accuracy over the matched grid against frames, one chart per
// ladder (one line per model in each), with each model's oracle dashed.
func modelsAccuracyChart(r *audit.ModelsResult, cs []*dataset.Config) string {
	cv := curvesOf(cs)
	var b strings.Builder
	for _, l := range cv.ladders {
		spec := lineSpec{aria: "accuracy against frames of every model over the matched grid: " + l.name, xs: cv.xLabels()}
		for i, m := range r.Models {
			col := modelColor(i)
			if res := r.PerModel[m]; res != nil && res.OracleAccuracy != nil {
				spec.refs = append(spec.refs, refLine{y: *res.OracleAccuracy, color: col, title: modelName(m) + " oracle: " + F1(*res.OracleAccuracy)})
			}
			sr := series{name: modelName(m), color: col}
			for _, c := range cv.steps(l) {
				a := r.Accuracy[c.ID][m]
				sr.pts = append(sr.pts, seriesPt{x: cv.xIndex(c), y: a, title: modelName(m) + " at " + c.ID + ": " + F1(a)})
			}
			spec.series = append(spec.series, sr)
		}
		if len(cv.ladders) > 1 {
			fmt.Fprintf(&b, `<p class="lead"><b>%s</b></p>`, esc(l.name))
		}
		b.WriteString(lineChart(spec))
	}
	if n := cv.looseNote(); n != "" {
		fmt.Fprintf(&b, `<div class="note">%s</div>`, esc(n))
	}
	return b.String()
}

// mdLadders writes the accuracy as Markdown: one table per ladder (the text-only configs first), with
// each step's rescued and harmed items, and the configs of unknown frames in a table of their own.
func mdLadders(p mdPrinter, r *audit.Result) {
	cv := curvesOf(mcConfigs(r))
	p("\n## Accuracy\n")
	for _, l := range cv.ladders {
		if len(cv.ladders) > 1 {
			p("\n### %s\n", mdEsc(l.name))
		}
		p("\n| config | cost | accuracy | rescued | harmed | net (items) |\n|---|---|---|---|---|---|\n")
		steps := cv.steps(l)
		for k, c := range steps {
			p("| %s | %s | %s |", mdEsc(c.ID), mdEsc(costLabel(c)), F1(r.Accuracy[c.ID]))
			var q *audit.Pair
			if k > 0 {
				q = pairOf(r, steps[k-1].ID, c.ID)
			}
			switch {
			case k == 0:
				p(" | | |\n")
			case q == nil:
				p(" — | — | — |\n")
			default:
				p(" %d | %d | %+d |\n", q.Rescued, q.Harmed, q.Rescued-q.Harmed)
			}
		}
	}
	if why := missingSteps(r, cv); why != "" {
		p("\n— %s\n", mdEsc(why))
	}
	rest := cv.loose
	if len(cv.ladders) == 0 || len(cv.text) > 1 {
		rest = append(append([]*dataset.Config{}, cv.text...), rest...)
	}
	if len(rest) > 0 {
		if len(cv.ladders) > 0 {
			p("\n### On no ladder\n")
		}
		p("\n| config | cost | accuracy |\n|---|---|---|\n")
		for _, c := range rest {
			p("| %s | %s | %s |\n", mdEsc(c.ID), mdEsc(costLabel(c)), F1(r.Accuracy[c.ID]))
		}
	}
}

// accuracyLead explains the accuracy chart: one curve, or one per ladder.
func accuracyLead(r *audit.Result) string {
	if len(curvesOf(mcConfigs(r)).ladders) > 1 {
		return "One curve per ladder (the configurations that differ only in frames: same sampling, size and pipeline) against frames, all starting from the text-only point; each curve hides the flows under it: the bars count, for every step along a ladder, the items it rescued (up) and harmed (down), in the curve's colour, ladders side by side. A change of size, sampling or pipeline is not a step (the pairs table and the iso-compute chart compare across ladders). The dashed line is the item-level oracle."
	}
	return "The aggregate curve (blue) against frames hides the flows under it: for every step to the next budget, green bars count the items it rescued and red bars the items it harmed. The dashed line is the item-level oracle."
}

// looseNoteHTML names the configs on no curve and says why steps have no bars, "" when neither.
func looseNoteHTML(r *audit.Result) string {
	cv := curvesOf(mcConfigs(r))
	out := ""
	if n := cv.looseNote(); n != "" {
		out += `<div class="note">` + esc(n) + `</div>`
	}
	if why := missingSteps(r, cv); why != "" {
		out += `<div class="note">— ` + esc(why) + `</div>`
	}
	return out
}

// missingSteps says why some step along a ladder has no rescued/harmed counts (the audit holds no pair
// of its two configs: their order is undefined), "" when every step has them.
func missingSteps(r *audit.Result, cv *curves) string {
	n := 0
	for _, l := range cv.ladders {
		steps := cv.steps(l)
		for k := 1; k < len(steps); k++ {
			if pairOf(r, steps[k-1].ID, steps[k].ID) == nil {
				n++
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d step(s) along the ladders have no rescued/harmed counts: undefined, %s.", n, undefinedReason(&r.Metrics, "pairs"))
}

// isoChart draws the iso-compute groups on their own (configs of about the same pixel cost, spent
// differently: more frames or larger frames): each allocation's accuracy and the group's oracle.
// They are no step of a ladder, so the accuracy curves leave them to this chart.
func isoChart(r *audit.Result) string {
	if len(r.IsoCompute) == 0 {
		return ""
	}
	cs := mcConfigs(r)
	ls := configLabels(cs)
	lbl := map[string]string{}
	for i, c := range cs {
		lbl[c.ID] = ls[i].text()
	}
	longest := textW("group oracle", cfgCharW)
	rows := 0
	for _, g := range r.IsoCompute {
		rows += len(g.Configs) + 2
		for _, c := range g.Configs {
			longest = max(longest, textW(lbl[c], cfgCharW))
		}
	}
	W, right, rowH := 1040.0, 90.0, 24.0
	left := math.Min(420, math.Max(90, longest+24))
	H := 14 + rowH*float64(rows) + 30
	x := func(v float64) float64 { return left + v/100*(W-left-right) }
	s := openSVG(W, H, "iso-compute groups: accuracy of each allocation of about the same pixel cost, and the group oracle")
	for v := 0.0; v <= 100; v += 20 {
		s.f(`<line x1="%.1f" x2="%.1f" y1="8" y2="%.1f" class="grid"/>`, x(v), x(v), H-26)
		s.text(x(v), H-10, "middle", "tick", fmt.Sprintf("%.0f", v))
	}
	yy := 8.0
	for gi, g := range r.IsoCompute {
		cost := ""
		if len(g.Costs) > 0 {
			cost = " · " + humanCost(float64(g.Costs[0])) + " px"
		}
		s.text(left-10, yy+rowH/2+4, "end", "grp", fmt.Sprintf("group %d%s", gi+1, cost))
		yy += rowH
		for i, c := range g.Configs {
			a := g.Accuracy[c]
			s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="%s"><title>%s: %s, %d items only it gets right</title></rect>`, left, yy+4, x(a)-left, rowH-8, modelColor(i), esc(c), F1(a), g.OnlyCorrect[c])
			s.f(`<text x="%.1f" y="%.1f" text-anchor="end" class="cfg"><title>%s</title>%s</text>`, left-10, yy+rowH/2+4, esc(c), esc(lbl[c]))
			s.text(x(a)+6, yy+rowH/2+4, "start", "val", F1(a))
			yy += rowH
		}
		s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="%s"/>`, left, yy+4, x(g.Oracle)-left, rowH-8, colOK)
		s.text(left-10, yy+rowH/2+4, "end", "cfg ok", "group oracle")
		s.text(x(g.Oracle)+6, yy+rowH/2+4, "start", "val ok", F1(g.Oracle))
		yy += rowH
	}
	return s.close()
}
