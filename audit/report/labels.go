package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/framesweep/framesweep/audit/dataset"
)

// label is a config's name on a chart: the parts that vary across the grid (frames, sampling, size,
// pipeline), drawn one per line, with the full id on hover and in the legend. A real sweep's ids
// (`f32-lmms-eval-448x448-raw`) are too long to sit side by side under a chart's columns; what tells
// two columns apart is only what varies between them.
type label struct {
	parts []string
	id    string
}

// text is the label on one line.
func (l label) text() string { return strings.Join(l.parts, " ") }

// Character widths (px) of the charts' label fonts, generous enough for system-ui, Arial and DejaVu
// Sans: layout decisions use them, and the Chromium test measures the result.
const (
	cfgCharW  = 7.6 // .cfg: 12.5px, weight 600
	tickCharW = 6.6 // .tick: 11px
	valCharW  = 7.4 // .val: 12px, weight 600
	lineH     = 14.0
)

func textW(s string, charW float64) float64 { return float64(len([]rune(s))) * charW }

// widest is the widest part of any label.
func widest(ls []label) float64 {
	w := 0.0
	for _, l := range ls {
		for _, p := range l.parts {
			w = max(w, textW(p, cfgCharW))
		}
	}
	return w
}

// maxParts is the most parts of any label.
func maxParts(ls []label) int {
	n := 1
	for _, l := range ls {
		n = max(n, len(l.parts))
	}
	return n
}

// configLabels labels cs by what varies across them. Text-only configs are "text"; a config
// without metadata, or two configs the varying fields cannot tell apart, keep their ids.
func configLabels(cs []*dataset.Config) []label {
	fields := []func(*dataset.Config) string{
		func(c *dataset.Config) string {
			if c.Frames == nil {
				return ""
			}
			return fmt.Sprintf("%df", *c.Frames)
		},
		func(c *dataset.Config) string {
			s := c.Policy // a preset is its own sampling rule: it names the sampling alone
			if c.Preset != "" {
				s = c.Preset
			}
			if c.Seed != nil {
				s += fmt.Sprintf(" s%d", *c.Seed)
			}
			return s
		},
		func(c *dataset.Config) string {
			switch {
			case c.Width == nil || c.Height == nil:
				return ""
			case *c.Width == *c.Height:
				return fmt.Sprintf("%d²", *c.Width)
			}
			return fmt.Sprintf("%d×%d", *c.Width, *c.Height)
		},
		func(c *dataset.Config) string { return c.Pipeline },
	}
	vary := make([]bool, len(fields))
	for f, get := range fields {
		seen := map[string]bool{}
		for _, c := range cs {
			if !c.TextOnly {
				seen[get(c)] = true
			}
		}
		vary[f] = len(seen) > 1
	}
	out := make([]label, len(cs))
	count := map[string]int{}
	for i, c := range cs {
		out[i].id = c.ID
		switch {
		case c.TextOnly:
			out[i].parts = []string{"text"}
		case c.Frames == nil:
			out[i].parts = []string{c.ID}
		default:
			for f, get := range fields {
				if v := get(c); (vary[f] || f == 0) && v != "" {
					out[i].parts = append(out[i].parts, v)
				}
			}
		}
		count[out[i].text()]++
	}
	for i := range out {
		if count[out[i].text()] > 1 {
			out[i].parts = []string{out[i].id}
		}
	}
	return out
}

// labelsDiffer reports whether any label is not its config's id (then the legend is worth showing).
func labelsDiffer(ls []label) bool {
	for _, l := range ls {
		if l.text() != l.id {
			return true
		}
	}
	return false
}

// rotation picks how one-line labels at spacing px are drawn when stacked parts do not fit: rotated
// by deg degrees, every every-th label (the rest keep their hover titles on the chart's marks). Two
// parallel labels are rowGap px apart perpendicular to their baselines: spacing·sin(deg).
func rotation(spacing float64) (deg float64, every int) {
	const rowGap = 17.0 // a .cfg line box, with room to spare
	for _, d := range []float64{40, 60, 90} {
		if spacing*math.Sin(d*math.Pi/180) >= rowGap {
			return d, 1
		}
	}
	return 90, int(math.Ceil(rowGap / spacing))
}

// stacked reports whether labels fit as stacked parts, one per line.
func stacked(ls []label, spacing float64) bool { return widest(ls) <= spacing*0.92 }

func longestLine(ls []label) float64 {
	w := 0.0
	for _, l := range ls {
		w = max(w, textW(l.text(), cfgCharW))
	}
	return w
}

// legend lists each label with its config's full id and cost: the key to every chart's axis.
func legend(cs []*dataset.Config, ls []label) string {
	if !labelsDiffer(ls) {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<details class="legend" open><summary>Configuration key (chart label → config id)</summary><table><tr><th>label</th><th style="text-align:left">config</th><th style="text-align:left">cost</th></tr>`)
	for i, c := range cs {
		fmt.Fprintf(&b, `<tr><td>%s</td><td class="l">%s</td><td class="l">%s</td></tr>`, esc(ls[i].text()), esc(c.ID), esc(costLabel(c)))
	}
	b.WriteString(`</table></details>`)
	return b.String()
}

// topLabels draws labels above a chart, their last line's baseline at y (parts stacked upwards), or
// rotated up from y (rotation) when the widest part does not fit the spacing.
func topLabels(s *svgB, ls []label, xs []float64, y, spacing float64) {
	if stacked(ls, spacing) {
		for i, l := range ls {
			y0 := y - float64(len(l.parts)-1)*lineH
			s.f(`<text x="%.1f" y="%.1f" text-anchor="middle" class="cfg"><title>%s</title>`, xs[i], y0, esc(l.id))
			for k, p := range l.parts {
				s.f(`<tspan x="%.1f" dy="%.1f">%s</tspan>`, xs[i], float64(min(k, 1))*lineH, esc(p))
			}
			s.f(`</text>`)
		}
		return
	}
	deg, every := rotation(spacing)
	for i, l := range ls {
		if i%every == 0 {
			s.f(`<text transform="translate(%.1f %.1f) rotate(-%.0f)" text-anchor="start" class="cfg"><title>%s</title>%s</text>`, xs[i]-4, y, deg, esc(l.id), esc(l.text()))
		}
	}
}

// topLabelsHeight is the room topLabels needs above y.
func topLabelsHeight(ls []label, spacing float64) float64 {
	if stacked(ls, spacing) {
		return float64(maxParts(ls)-1)*lineH + 14
	}
	deg, _ := rotation(spacing)
	return longestLine(ls)*math.Sin(deg*math.Pi/180) + 18
}

// placer keeps labels of a chart clear of each other: each is put at the first candidate position
// whose estimated box meets no label placed before, or left out (its value stays in a hover title).
type placer struct{ boxes [][4]float64 }

// box is a label's estimated extent: x range by anchor and width, the baseline's font box.
func labelBox(x, y float64, anchor string, w float64) [4]float64 {
	x0 := x - w/2
	switch anchor {
	case "start":
		x0 = x
	case "end":
		x0 = x - w
	}
	return [4]float64{x0 - 2, y - 11, x0 + w + 2, y + 4}
}

// place tries the candidates (x, y, anchor) for a text of width w; ok is false when none fits.
func (p *placer) place(w float64, cands ...struct {
	x, y   float64
	anchor string
}) (x, y float64, anchor string, ok bool) {
	for _, c := range cands {
		b := labelBox(c.x, c.y, c.anchor, w)
		free := true
		for _, o := range p.boxes {
			if b[0] < o[2] && o[0] < b[2] && b[1] < o[3] && o[1] < b[3] {
				free = false
				break
			}
		}
		if free {
			p.boxes = append(p.boxes, b)
			return c.x, c.y, c.anchor, true
		}
	}
	return 0, 0, "", false
}

// at is one candidate position for placer.place.
func at(x, y float64, anchor string) struct {
	x, y   float64
	anchor string
} {
	return struct {
		x, y   float64
		anchor string
	}{x, y, anchor}
}
