package report

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/dataset"
)

// Options label a report.
type Options struct {
	Title   string   // default "framesweep audit"
	Sources []string // the record files, listed in the header
	// Items are every model's trajectories as the audit counts them (audit.AllTrajectories): the HTML
	// and Markdown reports name the confused, text-overwritten and regressed items from them. nil:
	// no item lists.
	Items []audit.ModelTrajectories
	// Questions are the items' questions by QuestionKey(task, id) (a sweep's items file), shown
	// beside the ids; nil: ids only.
	Questions map[string]string
}

func (o Options) title() string {
	if o.Title == "" {
		return "framesweep audit"
	}
	return o.Title
}

// F1 formats a value with one decimal; the reports use it for every point/percent value.
func F1(v float64) string { return fmt.Sprintf("%.1f", v) }

// P formats a nullable value; "–" stands for null.
func P(v *float64) string {
	if v == nil {
		return "–"
	}
	return F1(*v)
}

// UndefinedLines groups a result's undefined metrics (audit.Metrics.Undefined: JSON key → reason) by
// reason: "key, key: reason", in key order of first appearance. Every report shows them beside the
// null values, so that no "–" goes without its reason.
func UndefinedLines(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var reasons []string
	by := map[string][]string{}
	for _, k := range keys {
		if by[m[k]] == nil {
			reasons = append(reasons, m[k])
		}
		by[m[k]] = append(by[m[k]], k)
	}
	out := make([]string, len(reasons))
	for i, r := range reasons {
		out[i] = strings.Join(by[r], ", ") + ": " + r
	}
	return out
}

// NA is what a report shows for an undefined value that a unit or a sign would otherwise decorate
// ("n/a", never "+–" or "–%").
const NA = "n/a"

// Pct formats a nullable percentage with its unit: "12.5%", or NA.
func Pct(v *float64) string {
	if v == nil {
		return NA
	}
	return F1(*v) + "%"
}

// Plus formats a nullable gain in points with its sign: "+5.0", or NA.
func Plus(v *float64) string {
	if v == nil {
		return NA
	}
	return fmt.Sprintf("%+.1f", *v)
}

// Saving formats a saving (% below a reference) as the change it is: "−31.7%", or "+4.0%" when the
// value is negative (dearer than the reference); "–" for null.
func Saving(v *float64) string {
	switch {
	case v == nil:
		return "–"
	case *v >= 0:
		return "−" + F1(*v) + "%"
	}
	return "+" + F1(-*v) + "%"
}

// savingClass is the CSS class of a saving: ok when it saves, bad when it costs more.
func savingClass(v *float64) string {
	if v != nil && *v < 0 {
		return "bad"
	}
	return "ok"
}

// CI formats an interval as "[lo, hi]".
func CI(iv *audit.Interval) string {
	if iv == nil {
		return ""
	}
	return "[" + F1(iv.Lo) + ", " + F1(iv.Hi) + "]"
}

// PValue formats McNemar's p.
func PValue(p float64) string {
	switch {
	case p >= 0.001:
		return fmt.Sprintf("%.3f", p)
	case p == 0:
		return "0"
	default:
		return fmt.Sprintf("%.1e", p)
	}
}

func esc(s string) string { return html.EscapeString(s) }

func keysOf[M ~map[string]V, V any](m M) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// mcConfigs returns the multiple-choice configs in display (cost) order.
func mcConfigs(r *audit.Result) []*dataset.Config {
	var out []*dataset.Config
	for _, c := range r.Configs {
		if c.Kind == "multiple_choice" {
			out = append(out, c)
		}
	}
	return out
}

func costLabel(c *dataset.Config) string {
	switch {
	case c.TextOnly:
		return "text only"
	case c.Frames == nil:
		return "cost unknown"
	}
	s := fmt.Sprintf("%d frames", *c.Frames)
	if c.Width != nil && c.Height != nil {
		s += fmt.Sprintf(" · %d×%d", *c.Width, *c.Height)
	}
	if c.Policy != "" {
		s += " · " + c.Policy
	}
	if c.Pipeline == "cached" {
		s += " · cached"
	}
	return s
}

func humanCost(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	}
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", v), "0"), ".")
}

func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*e >= v {
			return m * e
		}
	}
	return 10 * e
}

// F2 formats a harness's own number with two decimals, as the harnesses print theirs.
func F2(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", *v)
}

// harnessRow is one line of the "harness's own numbers" tables: a config's harness aggregate (or, for a
// config spanning several tasks, one of its parts) beside the item-level accuracy of the same records
// and the paired accuracy.
type harnessRow struct {
	config, metric, kind       string
	value, itemLevel, paired   *float64
	counted, leftOut, rescored int
	records                    int
	complete                   bool
	byDuration                 string
}

func harnessRows(r *audit.Result) []harnessRow {
	var rows []harnessRow
	for _, c := range r.Configs {
		h := r.AccuracyHarness[c.ID]
		if h == nil {
			continue
		}
		var paired *float64
		if a, ok := r.Accuracy[c.ID]; ok && r.Items > 0 {
			paired = &a
		}
		parts := h.Parts
		if len(parts) == 0 {
			parts = []*audit.HarnessAccuracy{h}
		}
		for _, p := range parts {
			var durs []string
			for _, k := range keysOf(p.ByDuration) {
				durs = append(durs, fmt.Sprintf("%s %.2f", k, p.ByDuration[k]))
			}
			rows = append(rows, harnessRow{config: c.ID, metric: p.Metric, kind: p.Kind, value: p.Value, itemLevel: p.ItemLevel, paired: paired,
				counted: p.Counted, leftOut: p.LeftOut, rescored: p.Rescored, records: p.Records, complete: p.Complete, byDuration: strings.Join(durs, ", ")})
		}
	}
	return rows
}
