package audit

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/record"
)

// An audit of nothing is an error, not an empty report: Result.Empty and ModelsResult.Empty say
// whether there is anything to show, and CheckNotEmpty says, in one line, why not and what to change.

// Empty reports whether the audit holds no paired item: no multiple-choice item with a record in
// every config and no open-ended item scored in every config.
func (r *Result) Empty() bool {
	for _, t := range r.Tasks {
		if !t.Empty() {
			return false
		}
	}
	return r.Items == 0 && (r.OpenEnded == nil || r.OpenEnded.Items == 0)
}

// Empty reports whether the models share no config with an item every model answered (in no task,
// when the records are of several).
func (r *ModelsResult) Empty() bool {
	for _, t := range r.Tasks {
		if !t.Empty() {
			return false
		}
	}
	return len(r.MatchedGrid.Configs) == 0 || r.MatchedGrid.Items == 0
}

// CheckNotEmpty is nil when res (one model's audit, or several models' with multi) has something
// to show, else a record.Error wrapping ErrNothingPaired, naming the records' files, that says why in one
// line and what to change: the id namespaces that never meet (lmms-eval's `videomme:0` against
// VLMEvalKit's `0`), or the model whose configs empty the matched grid.
func CheckNotEmpty(res *Result, multi *ModelsResult, recs []record.Record, opt ModelsOptions) error {
	why := ""
	switch {
	case multi != nil && multi.Empty():
		why = whyModelsEmpty(recs, opt)
	case multi == nil && res != nil && res.Empty():
		why = whyEmpty(recs)
	default:
		return nil
	}
	return record.Errorf(dataset.SourcePaths(recs), 0, "audit", ErrNothingPaired, "%s", why)
}

// whyEmpty explains a one-model audit with no paired item.
func whyEmpty(recs []record.Record) string {
	answered, failed := 0, 0
	sets := map[string]map[dataset.ItemKey]bool{} // config → items answered
	var order []string
	harness := map[string]string{}
	for i := range recs {
		r := &recs[i]
		if r.Failed() {
			failed++
			continue
		}
		answered++
		if sets[r.Config] == nil {
			sets[r.Config] = map[dataset.ItemKey]bool{}
			order = append(order, r.Config)
		}
		sets[r.Config][dataset.KeyOf(r)] = true
		if r.Harness != nil && harness[r.Config] == "" {
			harness[r.Config], _, _ = strings.Cut(r.Harness.Metric, " ")
		}
	}
	if answered == 0 {
		return fmt.Sprintf("all %d records are error records (pairs the sweep could not answer): nothing to audit; `framesweep sweep --resume --retry-errors` asks them again", failed)
	}
	for a := 0; a < len(order); a++ {
		for b := a + 1; b < len(order); b++ {
			if !meet(sets[order[a]], sets[order[b]]) {
				return "no item is paired: " + neverMeet(order[a], harness[order[a]], sets[order[a]], order[b], harness[order[b]], sets[order[b]])
			}
		}
	}
	return fmt.Sprintf("no item has a record in every one of the %d configs (%s), though every two of them share items: audit fewer configs", len(order), strings.Join(order, ", "))
}

// neverMeet describes two item sets that share no item: an example of each and the flags that map
// them onto one. Ids that differ only by their task (the task field, or an lmms-eval task prefix
// "task:" in the id, which the importer derives from the file name) call for one --task at import.
func neverMeet(a, ha string, sa map[dataset.ItemKey]bool, b, hb string, sb map[dataset.ItemKey]bool) string {
	name := func(c, h string) string {
		if h != "" {
			return fmt.Sprintf("config %s (%s)", c, h)
		}
		return "config " + c
	}
	na, nb := idNamespace(sa), idNamespace(sb)
	s := fmt.Sprintf("the item ids of %s (%s) and of %s (%s) never meet", name(a, ha), na.describe(), name(b, hb), nb.describe())
	if advice := taskAdvice(sa, sb, na, nb); advice != "" {
		return s + advice
	}
	switch {
	case na.prefix != nb.prefix && (na.prefix == "" || nb.prefix == "") && na.digits == nb.digits:
		p := na.prefix + nb.prefix
		s += fmt.Sprintf("; import both with --item-id question (the benchmark's question id) or, when both number the same release in the same order, give the bare ids the prefix with --item-prefix %s", p)
	default:
		s += "; import both under one id with --item-id (question: the benchmark's question id; or a field or column both carry) and --item-prefix"
	}
	return s
}

// taskAdvice is the advice for two item sets that would meet but for their task: the same ids under
// different tasks, or ids whose task prefixes ("videomme:", "videomme_16f:") differ and whose rests
// meet; "" otherwise.
func taskAdvice(sa, sb map[dataset.ItemKey]bool, na, nb namespace) string {
	ids := func(set map[dataset.ItemKey]bool, strip string) (map[string]bool, map[string]bool) {
		out, tasks := map[string]bool{}, map[string]bool{}
		for k := range set {
			out[strings.TrimPrefix(k.ID, strip)] = true
			tasks[k.Task] = true
		}
		return out, tasks
	}
	ia, ta := ids(sa, "")
	ib, tb := ids(sb, "")
	if meet(ia, ib) {
		return fmt.Sprintf("; the same ids are under different tasks (%s and %s): an item is its task and its id, so import both under one task name (import --task)",
			strings.Join(keysSorted(ta), ", "), strings.Join(keysSorted(tb), ", "))
	}
	if na.prefix == "" || nb.prefix == "" || na.prefix == nb.prefix {
		return ""
	}
	ra, _ := ids(sa, na.prefix)
	rb, _ := ids(sb, nb.prefix)
	if !meet(ra, rb) {
		return ""
	}
	return fmt.Sprintf("; they differ only by their task prefix (%q vs %q), which an importer derives from the file name: import both with the same --task (not --item-id or --item-prefix)",
		na.prefix, nb.prefix)
}

// namespace is the shape of a set of item ids: a prefix every id shares up to its last ':' (an
// lmms-eval task) and what follows it.
type namespace struct {
	prefix, kind string
	digits       bool // what follows the prefix is a number in every id
	examples     []string
}

func (n namespace) describe() string {
	return fmt.Sprintf("%s, e.g. %s", n.kind, strings.Join(n.examples, ", "))
}

func idNamespace(set map[dataset.ItemKey]bool) namespace {
	ids := make([]string, 0, len(set))
	for k := range set {
		ids = append(ids, k.ID)
	}
	sort.Strings(ids)
	n := namespace{examples: ids[:min(2, len(ids))]}
	p := ids[0][:strings.LastIndexByte(ids[0], ':')+1]
	for _, id := range ids {
		if !strings.HasPrefix(id, p) {
			p = ""
			break
		}
	}
	n.prefix = p
	digits := true
	defer func() { n.digits = digits }()
	for _, id := range ids {
		rest := strings.TrimPrefix(id, p)
		if rest == "" || strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsDigit(r) }) >= 0 {
			digits = false
			break
		}
	}
	switch {
	case digits && p != "":
		n.kind = fmt.Sprintf("%q then a number", p)
	case digits:
		n.kind = "bare numbers"
	case p != "":
		n.kind = fmt.Sprintf("%q then text", p)
	default:
		n.kind = "text"
	}
	return n
}

// meet reports whether two sets share an element.
func meet[K comparable](a, b map[K]bool) bool {
	if len(b) < len(a) {
		a, b = b, a
	}
	for id := range a {
		if b[id] {
			return true
		}
	}
	return false
}

// whyModelsEmpty explains an empty matched grid: the models whose configs or items leave the
// others nothing in common (each one's removal would leave a grid), else the configs per model.
func whyModelsEmpty(recs []record.Record, opt ModelsOptions) string {
	ms, err := SplitModels(recs)
	if err != nil || len(ms) < 2 {
		return "the models share no config with an item every model answered"
	}
	var culprits []string
	for drop := range ms {
		rest := make([]ModelRecords, 0, len(ms)-1)
		for i, m := range ms {
			if i != drop {
				rest = append(rest, m)
			}
		}
		if mg, _, err := matchGrid(rest, opt.Ceilings, nil); err == nil && len(mg.Configs) > 0 && mg.Items > 0 {
			culprits = append(culprits, ms[drop].Name)
		}
	}
	configs := func(m ModelRecords) []string {
		seen := map[string]bool{}
		var out []string
		for i := range m.Records {
			if c := m.Records[i].Config; !seen[c] && !m.Records[i].Failed() {
				seen[c] = true
				out = append(out, c)
			}
		}
		sort.Strings(out)
		return out
	}
	var others []string
	for _, m := range ms {
		if !containsString(culprits, m.Name) {
			others = append(others, m.Name)
		}
	}
	describe := func(name string) string {
		for _, m := range ms {
			if m.Name == name {
				return fmt.Sprintf("model %q (configs %s)", name, strings.Join(configs(m), ", "))
			}
		}
		return ""
	}
	if len(culprits) > 0 && len(others) > 0 {
		var parts []string
		for _, c := range culprits {
			parts = append(parts, describe(c))
		}
		return fmt.Sprintf("the matched grid is empty: %s %s; audit the others with --models %s", strings.Join(parts, " and "), itemsOrConfigs(ms, culprits[0]), strings.Join(others, ","))
	}
	if len(ms) == 2 {
		return fmt.Sprintf("the matched grid is empty: %s %s (the other: %s); audit each alone (--models %s, --models %s) or import them under shared config ids and item ids",
			describe(ms[1].Name), itemsOrConfigs(ms, ms[1].Name), describe(ms[0].Name), ms[0].Name, ms[1].Name)
	}
	var parts []string
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%q: %s", m.Name, strings.Join(configs(m), ", ")))
	}
	return fmt.Sprintf("the matched grid is empty: no config has an item every model answered (configs per model: %s); choose models that share configs and items with --models", strings.Join(parts, "; "))
}

// itemsOrConfigs says whether model culprit shares no config with the others, or shares configs
// but no item id (then the ids' namespaces).
func itemsOrConfigs(ms []ModelRecords, culprit string) string {
	mine, theirs := map[string]map[dataset.ItemKey]bool{}, map[string]map[dataset.ItemKey]bool{}
	for _, m := range ms {
		dst := theirs
		if m.Name == culprit {
			dst = mine
		}
		for i := range m.Records {
			r := &m.Records[i]
			if r.Failed() {
				continue
			}
			if dst[r.Config] == nil {
				dst[r.Config] = map[dataset.ItemKey]bool{}
			}
			dst[r.Config][dataset.KeyOf(r)] = true
		}
	}
	for _, c := range keysSorted(mine) {
		set := mine[c]
		if other := theirs[c]; other != nil && !meet(set, other) {
			na, nb := idNamespace(set), idNamespace(other)
			how := " (import under one id: --item-id, --item-prefix)"
			if advice := taskAdvice(set, other, na, nb); advice != "" {
				how = advice
			}
			return fmt.Sprintf("shares config %s with the others, but its item ids (%s) and theirs (%s) never meet%s", c, na.describe(), nb.describe(), how)
		}
	}
	return "shares no config with the others that has an item they all answered"
}
