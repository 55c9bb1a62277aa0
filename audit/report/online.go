package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/framesweep/framesweep/audit/cascade"
)

// CascadeHTML writes the cascade report of an online run compared with a full one (`framesweep
// cascade ONLINE_RUN --offline FULL_RUN --html`; sources: the runs as the header names them):
// accuracy against each fixed budget, the frame and latency savings, and the offline τ curve with the
// online point.
func CascadeHTML(w io.Writer, c *cascade.Comparison, sources []string) error {
	agree := 0
	if c.Agree != nil {
		agree = *c.Agree
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	oc := c.Online
	p(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">`)
	p(`<title>framesweep online cascade</title><style>%s</style></head><body>`, css)
	p(`<header><h1>Online confidence cascade</h1><p>%v frames, threshold %.4g · %d items · %s</p></header><main>`, oc.Budgets, oc.Threshold, oc.Items, esc(strings.Join(sources, ", ")))
	card := func(k, v, s string) {
		p(`<div class="card"><div class="k">%s</div><div class="v">%s</div><div class="s">%s</div></div>`, k, v, s)
	}
	p(`<div class="cards">`)
	card("Accuracy", F1(oc.Accuracy), "final answers of the online run")
	card("Distinct frames", F1(oc.MeanFramesDistinct), "per item, "+Saving(c.FramesSaving)+" vs the top budget")
	card("Answer latency", fmt.Sprintf("%.3fs", oc.MeanLatencyS), "per item, "+Saving(c.LatencySaving)+" vs the top budget")
	card("Offline replay", fmt.Sprintf("%d/%d", agree, agree+len(c.Disagree)), "items stop where the replay on the full run predicts")
	p(`</div>`)
	for _, d := range c.Disagree {
		p(`<div class="note">%s</div>`, esc(d))
	}
	p(`<section><h2>Against each fixed budget (same items)</h2><p class="lead">Fixed budgets and the τ curve come from the full sweep; the cascade row is the online run, measured live with frames decoded once per video and shared across its steps.</p><table><tr><th>policy</th><th>accuracy</th><th>distinct frames / item</th><th>answer latency s / item</th></tr>`)
	lat := func(v *float64) string {
		if v == nil {
			return "–"
		}
		return fmt.Sprintf("%.3f", *v)
	}
	if cr := c.Offline; cr != nil {
		for _, bu := range cr.Budgets {
			p(`<tr><td>fixed %s (%d frames)</td><td>%s</td><td>%s</td><td>%s</td></tr>`, esc(bu.Config), bu.Frames, F1(bu.Accuracy), F1(bu.SharedFramesCost), lat(bu.LatencyS))
		}
	}
	p(`<tr><td><b>online cascade, τ = %.4g</b></td><td><b>%s</b></td><td><b>%s</b> <span class="%s">(%s)</span></td><td>%.3f <span class="%s">(%s)</span></td></tr></table>`,
		oc.Threshold, F1(oc.Accuracy), F1(oc.MeanFramesDistinct), savingClass(c.FramesSaving), Saving(c.FramesSaving), oc.MeanLatencyS, savingClass(c.LatencySaving), Saving(c.LatencySaving))
	p(`<table><tr><th>stopped at</th><th>items</th></tr>`)
	for _, s := range oc.StoppedAt {
		p(`<tr><td>%s (%d frames)</td><td>%d</td></tr>`, esc(s.Config), s.Budget, s.Items)
	}
	p(`</table></section>`)
	if cr := c.Offline; cr != nil && len(cr.Curve) > 0 {
		p(`<section><h2>The τ curve (offline, on the full sweep)</h2><p class="lead">Accuracy against distinct frames over every threshold; the online run sits at τ = %.4g.</p>%s</section>`, oc.Threshold, cascadeChart(cr))
	}
	p(`<footer>framesweep cascade · the same numbers as <code>framesweep cascade --json</code></footer></main></body></html>`)
	_, err := io.WriteString(w, b.String())
	return err
}
