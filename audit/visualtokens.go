package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/record"
)

// VisualTokenConfig is one config's visual-token check (record.VisualTokens) over its records: how
// many carry both counts, how many of them the model counted otherwise than the frames fed make
// (seen/expected outside [0.95, 1.05]; in process, unequal), the median ratio, and how the seen
// counts were found. Error records count too: under `sweep --strict-tokens` the pairs outside the
// band are error records that keep their counts.
type VisualTokenConfig struct {
	Config  string  `json:"config"`
	Checked int     `json:"checked"`
	Outside int     `json:"outside"`
	Median  float64 `json:"median_ratio"`
	How     string  `json:"how"`
	Family  string  `json:"family,omitempty"`
}

// visualTokenChecks are the configs whose records carry both counts, sorted by config id.
func visualTokenChecks(recs []record.Record) []VisualTokenConfig {
	ratios := map[string][]float64{}
	byCfg := map[string]*VisualTokenConfig{}
	for i := range recs {
		v := recs[i].VisualTokens
		r, ok := v.Ratio()
		if !ok {
			continue
		}
		c := byCfg[recs[i].Config]
		if c == nil {
			c = &VisualTokenConfig{Config: recs[i].Config, How: v.How, Family: v.Family}
			byCfg[c.Config] = c
		}
		c.Checked++
		if v.Outside() {
			c.Outside++
		}
		ratios[c.Config] = append(ratios[c.Config], r)
	}
	out := make([]VisualTokenConfig, 0, len(byCfg))
	for id, c := range byCfg {
		rs := ratios[id]
		sort.Float64s(rs)
		c.Median = rs[len(rs)/2]
		if len(rs)%2 == 0 {
			c.Median = (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2
		}
		out = append(out, *c)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Config < out[b].Config })
	return out
}

// addVisualTokens puts the checks in res, and the warning when a config's counts part.
func addVisualTokens(res *Result, checks []VisualTokenConfig) {
	if len(checks) == 0 {
		return
	}
	res.VisualTokens = checks
	if w := visualTokenWarning(checks); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
}

// visualTokenWarning is the one line naming every config some of whose records the model counted
// otherwise than their frames make, with its median ratio ("" when none).
func visualTokenWarning(vs []VisualTokenConfig) string {
	var parts []string
	for _, c := range vs {
		if c.Outside > 0 {
			parts = append(parts, fmt.Sprintf("%s (median seen/expected %.2f; %d of %d pairs outside [%.2f, %.2f]; %s)",
				c.Config, c.Median, c.Outside, c.Checked, record.VisualLow, record.VisualHigh, c.How))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "visual tokens: the model counted otherwise than the frames fed make in " + strings.Join(parts, ", ") +
		": its answers are not the config's (a server that kept fewer frames or resized them; visual_tokens, docs/runtimes.md \"Did the server see our frames?\")"
}
