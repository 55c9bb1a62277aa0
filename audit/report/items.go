package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit"
)

// MaxListed is how many items an item list of a report shows; the rest are counted (the export's
// trajectories list every item with its tags).
const MaxListed = 50

// questionWords is how many words of a question an item list shows.
const questionWords = 10

// QuestionKey is the key of Options.Questions: an item's task and id.
func QuestionKey(task, id string) string { return task + "\x00" + id }

// itemRow is one item of a list: its id, task, category, the first words of its question, its
// verdicts in the configs' display order (✓ correct, ✗ wrong) and, in the cross-model list, the
// models it is confused in.
type itemRow struct {
	id, task, category, question, verdicts string
	models                                 []string
}

// itemList is the items one metric counts, or why that metric is undefined (then rows is empty and
// nothing is listed: an undefined metric names no item, and never "none").
type itemList struct {
	title, lead string
	rows        []itemRow
	undefined   string
	tasks       bool // the rows are of several tasks: show the task
}

// undefinedReason says why metric key of m is null. The audit records the reason beside the null
// (Metrics.Undefined, JSON "undefined") where it knows one; failing that, the report says what the
// metric needs.
func undefinedReason(m *audit.Metrics, key string) string {
	// The audit's own reason first; the generic one only where the audit gave none.
	if r := m.Undefined[key]; r != "" {
		return r
	}
	switch key {
	case "visual_confusion_rate":
		return "needs two configurations of different known cost"
	case "terminal_regression_rate":
		return "needs one costliest configuration and a cheaper one of known cost"
	case "text_overwrite_rate":
		return "needs a text-only configuration and a visual one"
	case "pairs":
		return "the audit orders no pair of these configurations (a cost unknown, or equal costs)"
	}
	return "not defined on these configurations"
}

// itemSet finds the trajectories of model (one model's audit: the only set) among opt.Items; nil when
// the report was given none, or when they are not the items and configs res counts (countedSet: then
// no list is shown rather than a list of other items).
func itemSet(opt Options, model string, res *audit.Result) *audit.TrajectorySet {
	for i := range opt.Items {
		if opt.Items[i].Model == model || len(opt.Items) == 1 {
			return countedSet(opt.Items[i].Set, res)
		}
	}
	return nil
}

// countedSet is ts when it holds the configs and the paired items res counts, else nil.
func countedSet(ts *audit.TrajectorySet, res *audit.Result) *audit.TrajectorySet {
	if ts == nil || res == nil || len(ts.MC) != len(res.MCConfigs) {
		return nil
	}
	for j, c := range ts.MC {
		if c.ID != res.MCConfigs[j] {
			return nil
		}
	}
	paired := 0
	for i := range ts.Items {
		if ts.Items[i].Paired {
			paired++
		}
	}
	if paired != res.Items {
		return nil
	}
	return ts
}

// rowOf is trajectory t as a list row.
func rowOf(t *audit.Trajectory, q map[string]string) itemRow {
	var v strings.Builder
	for _, c := range t.Correct {
		switch {
		case c == nil:
			v.WriteString("·")
		case *c:
			v.WriteString("✓")
		default:
			v.WriteString("✗")
		}
	}
	return itemRow{id: t.ItemID, task: t.Task, category: t.Category, question: firstWords(q[QuestionKey(t.Task, t.ItemID)], questionWords), verdicts: v.String()}
}

// firstWords is s cut to n words, "…" marking the cut.
func firstWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) <= n {
		return strings.Join(w, " ")
	}
	return strings.Join(w[:n], " ") + " …"
}

// itemLists are one model's confused, text-overwritten and terminally regressed items (the paired
// items with that tag), each with the metric's rate; nil when ts is nil.
func itemLists(res *audit.Result, ts *audit.TrajectorySet, q map[string]string) []itemList {
	if ts == nil {
		return nil
	}
	type spec struct {
		title, lead, key string
		rate             *float64
		tag              func(audit.ItemTags) bool
	}
	specs := []spec{
		{"Confused items", "Right at a cheaper configuration, wrong at a costlier one (visual confusion)", "visual_confusion_rate",
			res.VisualConfusionRate, func(g audit.ItemTags) bool { return g.Confused }},
		{"Text-overwritten items", "Right with the question alone (text only), wrong with some visual input", "text_overwrite_rate",
			res.TextOverwriteRate, func(g audit.ItemTags) bool { return g.TextOverwrite }},
		{"Terminal regressions", "Wrong at the costliest configuration (" + res.TerminalConfig + "), right at a cheaper one", "terminal_regression_rate",
			res.TerminalRegressionRate, func(g audit.ItemTags) bool { return g.TerminalRegression }},
	}
	var out []itemList
	for _, s := range specs {
		l := itemList{title: s.title, lead: s.lead}
		if s.rate == nil {
			l.undefined = undefinedReason(&res.Metrics, s.key)
			out = append(out, l)
			continue
		}
		for i := range ts.Items {
			if t := &ts.Items[i]; t.Paired && s.tag(t.Tags) {
				l.rows = append(l.rows, rowOf(t, q))
			}
		}
		l.tasks = severalTasks(l.rows)
		out = append(out, l)
	}
	return out
}

func severalTasks(rows []itemRow) bool {
	for _, r := range rows {
		if r.task != rows[0].task {
			return true
		}
	}
	return false
}

// confusedInKList lists the items confused in at least one model, those confused in the most models
// first (then by id): the cross-model list. Undefined when some model's confusion is.
func confusedInKList(r *audit.ModelsResult, opt Options) *itemList {
	cm := r.CrossModel
	if cm == nil || cm.Items == 0 || len(opt.Items) == 0 {
		return nil
	}
	l := &itemList{title: fmt.Sprintf("Confused in k of the %d models", len(r.Models)), lead: "The matched items confused in some model, those confused in the most models first"}
	if len(cm.ConfusedInK) == 0 {
		l.undefined = "visual confusion is undefined for some model: its configurations have no order"
		return l
	}
	type acc struct {
		row    itemRow
		models []string
	}
	byItem := map[string]*acc{}
	var keys []string
	for _, mt := range opt.Items {
		ts := countedSet(mt.Set, r.PerModel[mt.Model])
		if ts == nil {
			return nil // not the items the audit counts: list none rather than others
		}
		for i := range ts.Items {
			t := &ts.Items[i]
			if !t.Paired || !t.Tags.Confused {
				continue
			}
			k := QuestionKey(t.Task, t.ItemID)
			a := byItem[k]
			if a == nil {
				row := rowOf(t, opt.Questions)
				row.verdicts = ""
				a = &acc{row: row}
				byItem[k] = a
				keys = append(keys, k)
			}
			a.models = append(a.models, modelName(mt.Model))
		}
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := byItem[keys[i]], byItem[keys[j]]
		if len(a.models) != len(b.models) {
			return len(a.models) > len(b.models)
		}
		return a.row.id < b.row.id || (a.row.id == b.row.id && a.row.task < b.row.task)
	})
	for _, k := range keys {
		row := byItem[k].row
		row.models = byItem[k].models
		l.rows = append(l.rows, row)
	}
	l.tasks = severalTasks(l.rows)
	return l
}

// verdictOrder names the columns of the verdicts: the configs' chart labels (configLabels), in
// display order.
func verdictOrder(r *audit.Result) []string {
	var out []string
	for _, l := range configLabels(mcConfigs(r)) {
		out = append(out, l.text())
	}
	return out
}

// itemListsHTML renders lists as one block each: a heading with the count, the first MaxListed
// rows in a table, and the count of the rest; configs (when given) are the verdicts' order.
func itemListsHTML(ls []itemList, configs []string) string {
	var b strings.Builder
	if len(configs) > 0 {
		fmt.Fprintf(&b, `<p class="lead">Verdicts: ✓ right, ✗ wrong, in the order %s.</p>`, esc(strings.Join(configs, " · ")))
	}
	for _, l := range ls {
		fmt.Fprintf(&b, `<h3>%s: %s</h3><p class="lead">%s.`, esc(l.title), listCount(l), esc(l.lead))
		if l.undefined != "" {
			fmt.Fprintf(&b, `</p><div class="note">— undefined: %s.</div>`, esc(l.undefined))
			continue
		}
		if len(l.rows) == 0 {
			b.WriteString(`</p>`)
			continue
		}
		b.WriteString(`</p><table class="items"><tr><th>item</th>`)
		if l.tasks {
			b.WriteString(`<th style="text-align:left">task</th>`)
		}
		b.WriteString(`<th style="text-align:left">category</th><th style="text-align:left">question</th>`)
		if l.rows[0].models != nil {
			b.WriteString(`<th>models</th><th style="text-align:left">confused in</th>`)
		} else {
			b.WriteString(`<th style="text-align:left">verdicts</th>`)
		}
		b.WriteString(`</tr>`)
		for _, r := range l.rows[:min(len(l.rows), MaxListed)] {
			fmt.Fprintf(&b, `<tr><td class="l"><code>%s</code></td>`, esc(r.id))
			if l.tasks {
				fmt.Fprintf(&b, `<td class="l">%s</td>`, esc(r.task))
			}
			fmt.Fprintf(&b, `<td class="l">%s</td><td class="l">%s</td>`, esc(r.category), esc(r.question))
			if r.models != nil {
				fmt.Fprintf(&b, `<td>%d</td><td class="l">%s</td>`, len(r.models), esc(strings.Join(r.models, ", ")))
			} else {
				fmt.Fprintf(&b, `<td class="l"><code>%s</code></td>`, r.verdicts)
			}
			b.WriteString(`</tr>`)
		}
		b.WriteString(`</table>`)
		if n := len(l.rows) - MaxListed; n > 0 {
			fmt.Fprintf(&b, `<p class="lead">… and %d more (every item and its tags: <code>framesweep audit --export DIR</code>, trajectories.jsonl).</p>`, n)
		}
	}
	return b.String()
}

// listCount is the heading's count: "3 items", or "—" when the metric is undefined.
func listCount(l itemList) string {
	switch {
	case l.undefined != "":
		return "—"
	case len(l.rows) == 1:
		return "1 item"
	}
	return fmt.Sprintf("%d items", len(l.rows))
}

// mdItemLists writes lists as Markdown: a heading with the count, a table of the first MaxListed
// rows and the count of the rest.
func mdItemLists(p mdPrinter, ls []itemList, configs []string) {
	if len(configs) > 0 {
		p("\nVerdicts: ✓ right, ✗ wrong, in the order %s.\n", mdEsc(strings.Join(configs, " · ")))
	}
	for _, l := range ls {
		p("\n### %s: %s\n\n%s.", mdEsc(l.title), listCount(l), mdEsc(l.lead))
		if l.undefined != "" {
			p("\n\n— undefined: %s.\n", mdEsc(l.undefined))
			continue
		}
		if len(l.rows) == 0 {
			p("\n")
			continue
		}
		models := l.rows[0].models != nil
		p("\n\n| item |")
		sep := "|---|"
		if l.tasks {
			p(" task |")
			sep += "---|"
		}
		if models {
			p(" category | question | models | confused in |\n%s---|---|---|---|\n", sep)
		} else {
			p(" category | question | verdicts |\n%s---|---|---|\n", sep)
		}
		for _, r := range l.rows[:min(len(l.rows), MaxListed)] {
			p("| %s |", mdEsc(r.id))
			if l.tasks {
				p(" %s |", mdEsc(r.task))
			}
			if models {
				p(" %s | %s | %d | %s |\n", mdEsc(r.category), mdEsc(r.question), len(r.models), mdEsc(strings.Join(r.models, ", ")))
			} else {
				p(" %s | %s | %s |\n", mdEsc(r.category), mdEsc(r.question), r.verdicts)
			}
		}
		if n := len(l.rows) - MaxListed; n > 0 {
			p("\n… and %d more (every item and its tags: `framesweep audit --export DIR`, trajectories.jsonl).\n", n)
		}
	}
}
