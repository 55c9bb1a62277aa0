package audit

import (
	"fmt"
	"strings"

	"github.com/framesweep/framesweep/audit/cascade"
)

// MostlyUnparsed is the share of a config's answers (%) at or above which the audit warns that the
// config measures the answer parser, not the model.
const MostlyUnparsed = 50.0

// Unparsed counts the multiple-choice answers whose reply named no option letter (record.Record.Unparsed)
// over the paired items. Every metric counts such an answer wrong, as lmms-eval (every item in the
// denominator) and VLMEvalKit's exact matching ('Z' is never right) do, so trajectories stay paired
// and the numbers are the harnesses'; but an unparsed answer is not a wrong letter, so it is counted
// here per config, with the accuracy over the parsed answers beside it (Video-MME's official
// denominator), the flows between adjacent configs that go to or from one, and a warning when a
// config is mostly unparsed (docs/audit.md "Unparsed answers").
type Unparsed struct {
	Count    int                `json:"count"`
	ByConfig map[string]int     `json:"by_config"`
	Share    map[string]float64 `json:"share"` // % of the config's paired answers
	// AccuracyParsed is 100 · correct / parsed answers per config; null when none was parsed.
	AccuracyParsed map[string]*float64 `json:"accuracy_parsed"`
	// Mostly lists the configs with at least MostlyUnparsed % of their answers unparsed.
	Mostly []string `json:"mostly_unparsed"`
	// Flows are the adjacent pairs (Pairs) whose rescued or harmed items include an unparsed answer
	// on the wrong side: a "rescue" from no letter, a "harm" into no letter.
	Flows    []UnparsedFlow `json:"flows"`
	Examples []string       `json:"examples"` // up to 5 "item config"
}

// UnparsedFlow counts the flows of one adjacent pair that involve an unparsed answer.
type UnparsedFlow struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Rescued int    `json:"rescued_from_unparsed"`
	Harmed  int    `json:"harmed_into_unparsed"`
}

// unparsed counts the paired items' unparsed answers per multiple-choice config.
func unparsed(v *mcView, pairs []Pair) *Unparsed {
	u := &Unparsed{ByConfig: map[string]int{}, Share: map[string]float64{}, AccuracyParsed: map[string]*float64{},
		Mostly: []string{}, Flows: []UnparsedFlow{}, Examples: []string{}}
	d, C := v.d, len(v.d.Configs)
	n := len(v.paired)
	bad := make([][]bool, len(v.cfgs)) // per config, per paired item
	for j, k := range v.ks {
		bad[j] = make([]bool, n)
		right := 0
		for pi, i := range v.paired {
			r := &d.Recs[d.Grid[i*C+k]]
			if v.correct(pi, j) {
				right++
			}
			if !r.Unparsed {
				continue
			}
			bad[j][pi] = true
			u.Count++
			u.ByConfig[v.cfgs[j].ID]++
			if len(u.Examples) < 5 {
				u.Examples = append(u.Examples, d.Name(i)+" "+v.cfgs[j].ID)
			}
		}
		id := v.cfgs[j].ID
		if n > 0 {
			u.Share[id] = 100 * float64(u.ByConfig[id]) / float64(n)
		}
		u.AccuracyParsed[id] = pct(right, n-u.ByConfig[id])
		if n > 0 && u.Share[id] >= MostlyUnparsed {
			u.Mostly = append(u.Mostly, id)
		}
	}
	if u.Count == 0 {
		return u
	}
	pos := map[string]int{}
	for j, c := range v.cfgs {
		pos[c.ID] = j
	}
	for _, p := range pairs {
		if !p.Adjacent {
			continue
		}
		a, b := pos[p.From], pos[p.To]
		f := UnparsedFlow{From: p.From, To: p.To}
		for pi := range v.paired {
			ca, cb := v.correct(pi, a), v.correct(pi, b)
			if !ca && cb && bad[a][pi] {
				f.Rescued++
			}
			if ca && !cb && bad[b][pi] {
				f.Harmed++
			}
		}
		if f.Rescued+f.Harmed > 0 {
			u.Flows = append(u.Flows, f)
		}
	}
	return u
}

// unparsedWarnings are the loud lines about unparsed answers: configs mostly unparsed, and a
// cascade whose budgets hold unparsed answers (its saving is then partly the parser's).
func unparsedWarnings(u *Unparsed, cr *cascade.Result) []string {
	if u == nil || u.Count == 0 {
		if cr != nil && len(cr.UnparsedBudgets()) > 0 { // the cascade's items need not be paired
			return []string{cascade.UnparsedWarning(cr.UnparsedBudgets())}
		}
		return nil
	}
	var out []string
	if len(u.Mostly) > 0 {
		var parts []string
		for _, id := range u.Mostly {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", id, u.Share[id]))
		}
		if same := sameShare(u); len(u.Mostly) == len(u.Share) && len(u.Mostly) > 2 && same >= 0 {
			parts = []string{fmt.Sprintf("every config (%d) %.0f%%", len(u.Mostly), same)}
		}
		out = append(out, fmt.Sprintf("answers mostly unparsed: %s of the answers named no option letter and count as wrong; their accuracy measures the answer parser, not the model: check the prompt template (sweep --template, the items' template) or the runtime's replies (unparsed)",
			strings.Join(parts, ", ")))
	}
	if cr != nil {
		if parts := cr.UnparsedBudgets(); len(parts) > 0 {
			out = append(out, cascade.UnparsedWarning(parts))
		}
	}
	return out
}

// unparsedNote is the plain note on unparsed answers, when there are some: the count per config
// and the flows they take part in.
func unparsedNote(u *Unparsed, order []string) string {
	if u == nil || u.Count == 0 {
		return ""
	}
	var parts []string
	for _, id := range order {
		if n := u.ByConfig[id]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%.1f%%)", id, n, u.Share[id]))
		}
	}
	s := fmt.Sprintf("%d answer(s) named no option letter (unparsed; counted wrong, accuracy over parsed answers in unparsed.accuracy_parsed): %s", u.Count, strings.Join(parts, ", "))
	flows := 0
	for _, f := range u.Flows {
		flows += f.Rescued + f.Harmed
	}
	if flows > 0 {
		s += fmt.Sprintf("; %d rescued/harmed item(s) between adjacent configs go from or to an unparsed answer (unparsed.flows)", flows)
	}
	return s
}

// sameShare is the share every config has, or -1 when they differ.
func sameShare(u *Unparsed) float64 {
	v := -1.0
	for _, sh := range u.Share {
		if v >= 0 && sh != v {
			return -1
		}
		v = sh
	}
	return v
}
