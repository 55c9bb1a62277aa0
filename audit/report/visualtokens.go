package report

import (
	"fmt"
	"strings"

	"github.com/framesweep/framesweep/audit"
)

// visualTokensSection is the report's "Did the model see the frames?" section: every config whose
// records carry the visual-token counts, the configs the model counted otherwise than their frames
// make marked beside their id ("" when no record carries counts).
func visualTokensSection(r *audit.Result) string {
	if len(r.VisualTokens) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<section><h2>Did the model see the frames?</h2><p class="lead">The visual tokens the model counted (a server's usage.prompt_tokens less the item's text-only prompt and the template's markers; in process, the tokens the runtime built) against those the frames fed make in the model family's arithmetic. A configuration outside 0.95–1.05 (in process: any difference) answered other frames than its own: a server that kept fewer frames or resized them.</p>`)
	b.WriteString(`<table><tr><th>configuration</th><th>pairs with both counts</th><th>median seen / expected</th><th>outside</th><th>how seen was found</th><th>family</th></tr>`)
	for _, c := range r.VisualTokens {
		cls, mark := "", ""
		if c.Outside > 0 {
			cls, mark = ` class="bad"`, ` <b class="bad">⚠ the model did not see these frames</b>`
		}
		fmt.Fprintf(&b, `<tr><td>%s%s</td><td>%d</td><td%s><b>%.3f</b></td><td%s>%d</td><td>%s</td><td>%s</td></tr>`,
			esc(c.Config), mark, c.Checked, cls, c.Median, cls, c.Outside, esc(c.How), esc(c.Family))
	}
	b.WriteString(`</table></section>`)
	return b.String()
}
