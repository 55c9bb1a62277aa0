package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/cascade"
)

const (
	colOK      = "#2b8a62"
	colOKSoft  = "#b7e4cf"
	colBad     = "#d64545"
	colBadSoft = "#f3c1c1"
	colWrong   = "#dfe3ea"
	colInk     = "#1f2933"
	colMuted   = "#7b8794"
	colAccent  = "#3b5bdb"
)

type svgB struct{ strings.Builder }

func (s *svgB) f(format string, a ...any) { fmt.Fprintf(&s.Builder, format, a...) }

func (s *svgB) text(x, y float64, anchor, cls, body string) {
	s.f(`<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, cls, body)
}

func openSVG(w, h float64, label string) *svgB {
	s := &svgB{}
	s.f(`<svg viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, w, h, esc(label))
	return s
}

func (s *svgB) close() string { s.WriteString("</svg>"); return s.String() }

func xsOf(n int, x func(float64) float64) []float64 {
	xs := make([]float64, n)
	for j := range xs {
		xs[j] = x(float64(j))
	}
	return xs
}

// flowChart is the alluvial diagram along one ladder (flowLadder): per config a correct block over a
// wrong block, and between consecutive configs four bands (stay correct, harmed, rescued, stay wrong)
// sized by item counts.
func flowChart(r *audit.Result) string {
	cs, trans := flowLadder(r)
	if len(cs) < 2 || r.Items == 0 {
		return ""
	}
	W, left, right := 1040.0, 40.0, 40.0
	H, innerGap, colW := 300.0, 10.0, 16.0
	total := H - innerGap
	n := float64(r.Items)
	step := (W - left - right - colW) / float64(len(cs)-1)
	x := func(j int) float64 { return left + float64(j)*step }
	ls := configLabels(cs)
	top := 8 + topLabelsHeight(ls, step)
	correct := make([]float64, len(cs))
	for j, c := range cs {
		correct[j] = math.Round(r.Accuracy[c.ID] * n / 100)
	}
	s := openSVG(W, top+H+50, "flow of items between correct and wrong across configurations")
	band := func(x1, a1, b1, x2, a2, b2 float64, fill, title string) {
		xm := (x1 + x2) / 2
		s.f(`<path d="M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f L%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f Z" fill="%s"><title>%s</title></path>`,
			x1, a1, xm, a1, xm, a2, x2, a2, x2, b2, xm, b2, xm, b1, x1, b1, fill, title)
	}
	hOf := func(v float64) float64 { return v / n * total }
	for j, t := range trans {
		if j+1 >= len(cs) {
			break
		}
		x1, x2 := x(j)+colW, x(j+1)
		okTop1, badTop1 := top, top+hOf(correct[j])+innerGap
		okTop2, badTop2 := top, top+hOf(correct[j+1])+innerGap
		sc, hm, rs, sw := float64(t.BothCorrect), float64(t.Harmed), float64(t.Rescued), float64(t.BothWrong)
		// Sources: correct = [stay correct | harmed]; wrong = [rescued | stay wrong].
		// Targets: correct = [stay correct | rescued]; wrong = [harmed | stay wrong].
		tt := esc(t.From) + " → " + esc(t.To)
		band(x1, okTop1, okTop1+hOf(sc), x2, okTop2, okTop2+hOf(sc), colOKSoft, fmt.Sprintf("%s: %d stay correct", tt, t.BothCorrect))
		band(x1, okTop1+hOf(sc), okTop1+hOf(sc+hm), x2, badTop2, badTop2+hOf(hm), colBad, fmt.Sprintf("%s: %d harmed", tt, t.Harmed))
		band(x1, badTop1, badTop1+hOf(rs), x2, okTop2+hOf(sc), okTop2+hOf(sc+rs), colOK, fmt.Sprintf("%s: %d rescued", tt, t.Rescued))
		band(x1, badTop1+hOf(rs), badTop1+hOf(rs+sw), x2, badTop2+hOf(hm), badTop2+hOf(hm+sw), colWrong, fmt.Sprintf("%s: %d stay wrong", tt, t.BothWrong))
		xm := (x1 + x2) / 2
		if lbl := fmt.Sprintf("+%d −%d", t.Rescued, t.Harmed); (t.Harmed > 0 || t.Rescued > 0) && step-colW >= textW(lbl, valCharW)+4 {
			s.f(`<text x="%.1f" y="%.1f" text-anchor="middle" class="flowlbl"><tspan fill="%s">+%d</tspan> <tspan fill="%s">−%d</tspan></text>`, xm, top+H+18, colOK, t.Rescued, colBad, t.Harmed)
		}
	}
	for j, c := range cs {
		ok := hOf(correct[j])
		s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %.0f correct</title></rect>`, x(j), top, colW, ok, colOK, esc(c.ID), correct[j])
		s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#9aa5b1"><title>%s: %.0f wrong</title></rect>`, x(j), top+ok+innerGap, colW, total-ok, esc(c.ID), n-correct[j])
	}
	xs := make([]float64, len(cs))
	for j := range xs {
		xs[j] = x(j) + colW/2
	}
	topLabels(s, ls, xs, top-10, step)
	s.text(left, top+H+40, "start", "tick", "bands: light green stays correct · green rescued · red harmed · grey stays wrong; block heights ∝ items")
	return s.close()
}

// heatmap: one band per trajectory pattern, height ∝ items, grouped by label.
func heatmap(r *audit.Result) string {
	cs := mcConfigs(r)
	if len(cs) == 0 || len(r.Patterns) == 0 {
		return ""
	}
	pats, hidden := heatmapPatterns(r)
	shown := 0
	for _, p := range pats {
		shown += p.Count
	}
	W, left := 1040.0, 150.0
	cellW := math.Min(64, (W-left-170)/float64(len(cs)))
	plotH := 420.0
	heights := make([]float64, len(pats))
	sum := 0.0
	for i, p := range pats {
		heights[i] = math.Max(4, plotH*float64(p.Count)/float64(shown))
		sum += heights[i]
	}
	ls := configLabels(cs)
	top := 8 + topLabelsHeight(ls, cellW) // room for the config labels
	groupGap := 10.0
	s := openSVG(W, top+sum+groupGap*4+40, "item by configuration trajectories grouped by pattern")
	topLabels(s, ls, xsOf(len(cs), func(j float64) float64 { return left + (j+0.5)*cellW }), top-8, cellW)
	y := top
	prev := ""
	groupStart := y
	flushGroup := func(label string, y0, y1 float64) {
		if label == "" {
			return
		}
		s.f(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/>`, left-10, left-10, y0, y1, colMuted)
		s.text(left-16, (y0+y1)/2+4, "end", "grp", esc(label))
	}
	for i, p := range pats {
		if p.Label != prev {
			flushGroup(prev, groupStart, y)
			if prev != "" {
				y += groupGap
			}
			groupStart, prev = y, p.Label
		}
		h := heights[i]
		for j := range cs {
			fill := colWrong
			if j < len(p.Pattern) && p.Pattern[j] == '1' {
				fill = colOK
			}
			s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="#fff" stroke-width="0.6"/>`, left+float64(j)*cellW, y, cellW, h, fill)
		}
		s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="transparent"><title>%s: %d items (%s)</title></rect>`, left, y, cellW*float64(len(cs)), h, esc(p.Pattern), p.Count, esc(p.Label))
		if h >= 11 {
			s.text(left+cellW*float64(len(cs))+10, y+h/2+4, "start", "tick", fmt.Sprintf("%d items · %s%%", p.Count, F1(100*float64(p.Count)/float64(r.Items))))
		}
		y += h
	}
	flushGroup(prev, groupStart, y)
	note := "each band is one trajectory (green = correct); height ∝ items"
	if hidden > 0 {
		note += fmt.Sprintf("; %d items in rarer patterns not drawn", hidden)
	}
	s.text(left, y+28, "start", "tick", note)
	return s.close()
}

// heatmapPatterns are the trajectories the heatmap draws, grouped by label (confused, rescued, always
// and never correct) and by count within a group: the most frequent 48; hidden counts the items of
// the rest.
func heatmapPatterns(r *audit.Result) ([]audit.Pattern, int) {
	order := map[string]int{"confused": 0, "rescued": 1, "always correct": 2, "never correct": 3}
	pats := append([]audit.Pattern(nil), r.Patterns...)
	sort.SliceStable(pats, func(a, b int) bool {
		if order[pats[a].Label] != order[pats[b].Label] {
			return order[pats[a].Label] < order[pats[b].Label]
		}
		return pats[a].Count > pats[b].Count
	})
	// The most frequent patterns (r.Patterns is sorted by count), then grouped for drawing.
	const maxRows = 48
	hidden := r.PatternsOther
	if len(pats) > maxRows {
		byCount := append([]audit.Pattern(nil), r.Patterns...)
		keep := map[string]bool{}
		for _, p := range byCount[:maxRows] {
			keep[p.Pattern] = true
		}
		var kept []audit.Pattern
		for _, p := range pats {
			if keep[p.Pattern] {
				kept = append(kept, p)
			} else {
				hidden += p.Count
			}
		}
		pats = kept
	}
	return pats, hidden
}

// oracleChart: each config's accuracy, the best fixed one highlighted, and the oracle.
func oracleChart(r *audit.Result) string {
	cs := mcConfigs(r)
	if len(cs) == 0 || r.OracleAccuracy == nil {
		return ""
	}
	ls := configLabels(cs)
	longest := textW("oracle", cfgCharW)
	for _, l := range ls {
		longest = max(longest, textW(l.text(), cfgCharW))
	}
	W, right, rowH := 1040.0, 90.0, 26.0
	left := math.Min(420, math.Max(90, longest+24))
	H := 20 + rowH*float64(len(cs)+1) + 46
	x := func(v float64) float64 { return left + v/100*(W-left-right) }
	s := openSVG(W, H, "oracle accuracy against every fixed configuration")
	for v := 0.0; v <= 100; v += 20 {
		s.f(`<line x1="%.1f" x2="%.1f" y1="14" y2="%.1f" class="grid"/>`, x(v), x(v), H-36)
		s.text(x(v), H-20, "middle", "tick", fmt.Sprintf("%.0f", v))
	}
	yy := 20.0
	for j, c := range cs {
		a := r.Accuracy[c.ID]
		fill := "#c5ccd6"
		if c.ID == r.BestFixedConfig {
			fill = colAccent
		}
		s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="%s"/>`, left, yy+4, x(a)-left, rowH-8, fill)
		s.f(`<text x="%.1f" y="%.1f" text-anchor="end" class="cfg"><title>%s</title>%s</text>`, left-10, yy+rowH/2+4, esc(c.ID), esc(ls[j].text()))
		s.text(x(a)+6, yy+rowH/2+4, "start", "val", F1(a))
		yy += rowH
	}
	o := *r.OracleAccuracy
	s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="%s"/>`, left, yy+4, x(o)-left, rowH-8, colOK)
	s.text(left-10, yy+rowH/2+4, "end", "cfg ok", "oracle")
	s.text(x(o)+6, yy+rowH/2+4, "start", "val ok", F1(o))
	if r.BestFixed != nil {
		oracleArrow(s, x(*r.BestFixed), x(o), yy, rowH, r.OracleHeadroom)
	}
	return s.close()
}

// oracleArrow draws the best fixed configuration's line and, on the oracle's row, an arrow from it to
// the oracle's bar end with the headroom under it. An arrow shorter than its head (a headroom of a
// few tenths of a point, or none) is left out: its head would cover the oracle's value.
func oracleArrow(s *svgB, bx, ox, yy, rowH float64, headroom *float64) {
	const head = 12 // the marker's length: 6 marker units × the stroke width 2
	s.f(`<line x1="%.1f" x2="%.1f" y1="14" y2="%.1f" stroke="%s" stroke-dasharray="4 3"/>`, bx, bx, yy+rowH, colAccent)
	if end := ox - 2; end-bx >= head {
		s.f(`<path d="M%.1f %.1f H%.1f" stroke="%s" stroke-width="2" marker-end="url(#arr)"/>`, bx, yy+rowH/2, end, colInk)
		s.f(`<defs><marker id="arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0 0L10 5L0 10z" fill="%s"/></marker></defs>`, colInk)
	}
	lbl := "headroom " + Plus(headroom)
	if headroom != nil && F1(*headroom) == F1(0) {
		lbl = "no headroom"
	}
	s.text((bx+ox)/2, yy+rowH+12, "middle", "val", lbl)
}

// budgetLabel names a cascade budget by its frames ("128f"), or by its id when it is not a budget.
func budgetLabel(cr *cascade.Result, id string) string {
	for _, b := range cr.Budgets {
		if b.Config == id {
			return fmt.Sprintf("%df", b.Frames)
		}
	}
	return id
}

// cascadeChart: accuracy against mean shared frame cost over the τ sweep, the fixed budgets, the
// reference line and the chosen τ. Labels that would meet another are moved or left to the hover
// titles (placer).
func cascadeChart(cr *cascade.Result) string {
	if cr == nil || len(cr.Curve) == 0 {
		return ""
	}
	W, H, left, right, top, bottom := 1040.0, 340.0, 64.0, 30.0, 20.0, 50.0
	maxX, lo, hi := 0.0, 100.0, 0.0
	for _, p := range cr.Curve {
		maxX = math.Max(maxX, p.SharedFramesCost)
		lo, hi = math.Min(lo, p.Accuracy), math.Max(hi, p.Accuracy)
	}
	for _, b := range cr.Budgets {
		maxX = math.Max(maxX, b.SharedFramesCost)
		lo, hi = math.Min(lo, b.Accuracy), math.Max(hi, b.Accuracy)
	}
	maxX = niceMax(maxX * 1.05)
	lo, hi = math.Max(0, math.Floor(lo/5)*5-5), math.Min(100, math.Ceil(hi/5)*5+5)
	x := func(v float64) float64 { return left + v/maxX*(W-left-right) }
	y := func(v float64) float64 { return top + (hi-v)/(hi-lo)*(H-top-bottom) }
	s := openSVG(W, H, "confidence cascade accuracy against shared frame cost")
	for v := math.Ceil(lo/5) * 5; v <= hi+1e-9; v += 5 {
		s.f(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/>`, left, W-right, y(v), y(v))
		s.text(left-8, y(v)+4, "end", "tick", fmt.Sprintf("%.0f", v))
	}
	for i := 0; i <= 5; i++ {
		v := maxX * float64(i) / 5
		s.text(x(v), H-bottom+18, "middle", "tick", humanCost(v))
	}
	s.text((left+W-right)/2, H-8, "middle", "axis", "mean distinct frames decoded per item (shared frame cost)")
	s.f(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle" class="axis">accuracy (points)</text>`, (top+H-bottom)/2)
	ry := y(cr.ReferenceAccuracy)
	s.f(`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="6 4"/>`, left, W-right, ry, ry, colMuted)
	var pl placer
	ref := fmt.Sprintf("reference %s: %s", budgetLabel(cr, cr.Reference), F1(cr.ReferenceAccuracy))
	if rx, rY, ra, ok := pl.place(textW(ref, tickCharW), at(W-right, ry-6, "end"), at(W-right, ry+16, "end")); ok {
		s.f(`<text x="%.1f" y="%.1f" text-anchor="%s" class="tick"><title>%s</title>%s</text>`, rx, rY, ra, esc(cr.Reference), esc(ref))
	}
	var pts []string
	for _, p := range cr.Curve {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.SharedFramesCost), y(p.Accuracy)))
	}
	s.f(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round"/>`, strings.Join(pts, " "), colAccent)
	if sel := cr.Selected; sel != nil {
		sx, sy := x(sel.SharedFramesCost), y(sel.Accuracy)
		s.f(`<circle cx="%.1f" cy="%.1f" r="8" fill="%s" stroke="#fff" stroke-width="2"/>`, sx, sy, colOK)
		lbl := fmt.Sprintf("τ = %.3g: %s at %s frames", sel.Tau, F1(sel.Accuracy), F1(sel.SharedFramesCost))
		anchor, dx := "start", 12.0
		if sx > W*0.7 {
			anchor, dx = "end", -12
		}
		// Below the point first: the curve continues to the right at about the same height.
		if lx, lY, la, ok := pl.place(textW(lbl, valCharW), at(sx+dx, sy+28, anchor), at(sx+dx, sy-16, anchor), at(sx+dx, sy+46, anchor)); ok {
			s.text(lx, lY, la, "val ok", lbl)
		}
	}
	for _, b := range cr.Budgets {
		bx, by := x(b.SharedFramesCost), y(b.Accuracy)
		s.f(`<rect x="%.1f" y="%.1f" width="10" height="10" fill="%s"><title>%s fixed: %s</title></rect>`, bx-5, by-5, colInk, esc(b.Config), F1(b.Accuracy))
		lbl := fmt.Sprintf("%df", b.Frames)
		if lx, lY, la, ok := pl.place(textW(lbl, tickCharW), at(bx, by+20, "middle"), at(bx, by-10, "middle"), at(bx, by+34, "middle"), at(bx+9, by+4, "start")); ok {
			s.f(`<text x="%.1f" y="%.1f" text-anchor="%s" class="tick"><title>%s</title>%s</text>`, lx, lY, la, esc(b.Config), lbl)
		}
	}
	return s.close()
}
