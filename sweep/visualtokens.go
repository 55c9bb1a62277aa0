package sweep

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/record"
)

// Did the model see the frames of the config? Every record of frames carries visual_tokens: what its
// family's arithmetic expects (the runtime's llm.VisualCheck) and what the model counted. In process
// the runtime says both. For a server the sweep finds the count: usage.prompt_tokens minus the item's
// text-only prompt tokens, from the grid's text-only config of the same item (a record waits for that
// answer), else the server's tokenize endpoint, else the text part a reference visual config of the
// item implies (the grid's visual config of fewest frames, taken as counted right). A config whose
// count leaves the band is warned about once, as soon as it does (--strict-tokens: the pair's record
// becomes an error record). docs/runtimes.md "Did the server see our frames?".

// tokenCheck is a session's check.
type tokenCheck struct {
	how     string       // llm.HowTextOnly, llm.HowTokenize, llm.HowTwoCfgs, or llm.HowUnknown
	why     string       // why a server's count cannot be found (how unknown)
	base    *grid.Config // text-only: the text-only config; two configs: the reference config
	counter llm.TextCounter
	strict  bool
	warn    func(msg string)

	mu       sync.Mutex
	known    map[string]baseline       // item → its baseline
	pending  map[string]bool           // items whose base pair this session asks
	parked   map[string][]*record.Full // item → records waiting for its baseline
	warned   map[string]bool           // configs warned about
	warnings []string
	counts   map[string]*textCount // item → its tokenize count
}

// baseline is an item's text-only prompt tokens (the prompt without its visual part), or why there is
// none.
type baseline struct {
	tokens int
	why    string
}

// textCount is one item's tokenize count, asked once.
type textCount struct {
	once sync.Once
	n    int
	err  error
}

// newTokenCheck chooses how the session finds a server's count (the grid's text-only config; the
// runtime's tokenize endpoint, probed once with the first item; a reference visual config) and which
// items' base pairs it will ask; on a resume the base records already in the RUN give their items'
// baselines.
func (s *session) newTokenCheck(ctx context.Context, groups []*group, todo int) error {
	tc := &tokenCheck{how: llm.HowUnknown, strict: s.o.StrictTokens, known: map[string]baseline{}, pending: map[string]bool{},
		parked: map[string][]*record.Full{}, warned: map[string]bool{}, counts: map[string]*textCount{},
		warn: func(msg string) { s.o.Log.Warn(msg) }}
	s.tokens = tc
	cfgs := s.o.Grid.Configs
	var ref *grid.Config
	for i := range cfgs {
		c := &cfgs[i]
		switch {
		case c.TextOnly && tc.base == nil:
			tc.how, tc.base = llm.HowTextOnly, c
		case !c.TextOnly && c.Frames > 0 && (ref == nil || c.Frames < ref.Frames):
			ref = c
		}
	}
	if tc.base == nil && todo > 0 {
		tc.chooseWithoutTextOnly(ctx, s, groups, ref)
	}
	if tc.base == nil {
		return nil
	}
	asked := 0
	for _, g := range groups {
		for _, it := range g.items {
			asked++
			if !s.skip(record.Pair{Item: it.ItemID, Config: tc.base.ID}) {
				tc.pending[it.ItemID] = true
			}
		}
	}
	if !s.o.Resume || len(tc.pending) == asked {
		return nil // every base pair is this session's
	}
	return s.w.Scan(ctx, func(r *record.Full) {
		if r.Config == tc.base.ID && !r.Failed() && !tc.pending[r.ItemID] {
			tc.known[r.ItemID] = tc.baselineOf(r)
		}
	})
}

// chooseWithoutTextOnly: the runtime's tokenize endpoint when it has one that answers, else two
// visual configs (ref: the one of fewest frames), else none.
func (tc *tokenCheck) chooseWithoutTextOnly(ctx context.Context, s *session, groups []*group, ref *grid.Config) {
	if c, ok := s.o.Runtime.(llm.TextCounter); ok && len(groups) > 0 && len(groups[0].items) > 0 {
		it := groups[0].items[0]
		pctx, cancel := untilStop(ctx, s.stop)
		n, err := c.TextPromptTokens(pctx, s.request(it))
		cancel()
		if !errors.Is(err, llm.ErrNoTokenize) {
			tc.how, tc.counter = llm.HowTokenize, c
			if err == nil { // the first item's count, not asked again
				first := &textCount{n: n}
				first.once.Do(func() {})
				tc.counts[it.ItemID] = first
			}
			return
		}
	}
	visual := 0
	for i := range s.o.Grid.Configs {
		if !s.o.Grid.Configs[i].TextOnly {
			visual++
		}
	}
	if ref != nil && visual > 1 {
		tc.how, tc.base = llm.HowTwoCfgs, ref
		return
	}
	tc.why = "the grid has no text-only config, the server no tokenize endpoint, and no two visual configs to compare"
}

// baselineOf is the baseline an item's base record gives: a text-only prompt's tokens; or, of the
// reference config, its prompt tokens less its expected visual tokens and overhead.
func (tc *tokenCheck) baselineOf(r *record.Full) baseline {
	switch {
	case r.Failed():
		return baseline{why: "the item's " + tc.base.ID + " pair got no answer"}
	case r.PromptTokens <= 0:
		return baseline{why: "the reply to the item's " + tc.base.ID + " pair has no usage.prompt_tokens"}
	case tc.how == llm.HowTextOnly:
		return baseline{tokens: r.PromptTokens}
	}
	v := r.VisualTokens
	if v == nil || v.Expected == nil {
		return baseline{why: "the reference config " + tc.base.ID + " has no expected count"}
	}
	return baseline{tokens: r.PromptTokens - *v.Expected - v.Overhead}
}

// measure fills r's visual_tokens from the runtime's check (ask, before the record is written): in
// process its own counts; for a server the expected count, and its count when the tokenize
// endpoint gives it (the other ways wait for the item's base record: settle).
func (tc *tokenCheck) measure(ctx context.Context, r *record.Full, it *items.Item, req *llm.Request, c *llm.VisualCheck) {
	if c == nil {
		return
	}
	v := &record.VisualTokens{Expected: c.Expected, Seen: c.Seen, How: c.How, Family: c.Family, Overhead: c.Overhead, Why: c.Why}
	r.VisualTokens = v
	switch {
	case v.Seen != nil:
		return
	case tc == nil:
		v.How = llm.HowUnknown
		return
	case tc.how != llm.HowTokenize:
		v.How = "" // found by settle
		return
	}
	tc.mu.Lock()
	n := tc.counts[it.ItemID]
	if n == nil {
		n = &textCount{}
		tc.counts[it.ItemID] = n
	}
	tc.mu.Unlock()
	n.once.Do(func() { n.n, n.err = tc.counter.TextPromptTokens(ctx, req) })
	if n.err != nil {
		tc.fill(r, baseline{why: "tokenize: " + n.err.Error()}, llm.HowTokenize)
		return
	}
	tc.fill(r, baseline{tokens: n.n}, llm.HowTokenize)
}

// fill derives r's seen count from the item's baseline: prompt_tokens − baseline − overhead.
func (tc *tokenCheck) fill(r *record.Full, b baseline, how string) {
	v := r.VisualTokens
	switch {
	case b.why != "":
		v.How, v.Why = llm.HowUnknown, joinWhy(v.Why, b.why)
	case r.PromptTokens <= 0:
		v.How, v.Why = llm.HowUnknown, joinWhy(v.Why, "the reply has no usage.prompt_tokens")
	default:
		n := max(0, r.PromptTokens-b.tokens-v.Overhead)
		v.Seen, v.How = &n, how
	}
}

func joinWhy(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// settle is what to write now of r (the feeder's lock held): r once its count is found (with the
// records that waited for r when r is their item's base record), or nothing while r waits for its
// item's base record. Each record written is judged (judge).
func (tc *tokenCheck) settle(r *record.Full) []*record.Full {
	if tc == nil {
		return []*record.Full{r}
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	out := []*record.Full{r}
	item := r.ItemID
	if tc.base != nil && r.Config == tc.base.ID {
		b := tc.baselineOf(r)
		tc.known[item] = b
		delete(tc.pending, item)
		if v := r.VisualTokens; v != nil && v.How == "" {
			v.How, v.Why = llm.HowUnknown, joinWhy(v.Why, "the reference of the two-visual-configs difference (taken as counted right)")
		}
		for _, p := range tc.parked[item] {
			tc.fill(p, b, tc.how)
			out = append(out, p)
		}
		delete(tc.parked, item)
	} else if v := r.VisualTokens; v != nil && v.How == "" {
		b, ok := tc.known[item]
		switch {
		case ok:
			tc.fill(r, b, tc.how)
		case tc.pending[item] && !r.Failed():
			tc.parked[item] = append(tc.parked[item], r)
			return nil
		default:
			why := tc.why
			if tc.base != nil {
				why = "the item's " + tc.base.ID + " pair has no record"
			}
			tc.fill(r, baseline{why: why}, tc.how)
		}
	}
	for _, x := range out {
		tc.judge(x)
	}
	return out
}

// flush is what waits for a base record that did not come this session (a stop, a failure before it):
// written with no count.
func (tc *tokenCheck) flush(its []*items.Item) []*record.Full {
	if tc == nil {
		return nil
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	var out []*record.Full
	for _, it := range its {
		for _, p := range tc.parked[it.ItemID] {
			tc.fill(p, baseline{why: "the item's " + tc.base.ID + " pair was not answered this session"}, tc.how)
			tc.judge(p)
			out = append(out, p)
		}
		delete(tc.parked, it.ItemID)
	}
	return out
}

// judge warns once per config whose count leaves the band, as soon as one does; under
// --strict-tokens the pair's record becomes an error record saying so (its check kept).
func (tc *tokenCheck) judge(r *record.Full) {
	v := r.VisualTokens
	if v == nil || r.Failed() || !v.Outside() {
		return
	}
	line := visualWarning(r)
	if !tc.warned[r.Config] {
		tc.warned[r.Config] = true
		tc.warnings = append(tc.warnings, line)
		tc.warn(line)
	}
	if tc.strict {
		r.Status, r.ErrorKind, r.Error = record.StatusError, record.ErrorRuntime, "--strict-tokens: "+line
		r.Correct, r.Score, r.Unparsed, r.Prediction, r.Confidence = nil, nil, false, "", nil
	}
}

// visualWarning is the one line naming a config whose count left the band and the likely causes.
func visualWarning(r *record.Full) string {
	v := r.VisualTokens
	ratio, _ := v.Ratio()
	who := "server counted"
	if v.How == llm.HowRuntime {
		who = "llama.cpp built"
	}
	return fmt.Sprintf("%s %s visual tokens for %s (item %s), %s expected (ratio %.2f, %s, %s): %s", who, thousands(*v.Seen), r.Config,
		r.ItemID, thousands(*v.Expected), ratio, v.Family, v.How, llm.VisualCauses(r.InputForm, ratio))
}

// thousands writes n with comma separators (1,024).
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// lines is the warnings so far, for the summary.
func (tc *tokenCheck) lines() []string {
	if tc == nil {
		return nil
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return append([]string(nil), tc.warnings...)
}
