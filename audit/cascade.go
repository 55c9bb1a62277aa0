package audit

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit/dataset"

	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/internal/splitmix"
	"github.com/framesweep/framesweep/record"
)

// MaxFolds bounds CascadeOptions.Folds (each fold holds its own aggregates).
const MaxFolds = 10000

// CascadeOptions choose the budgets of a confidence cascade (METRICS.md "Confidence cascade").
type CascadeOptions struct {
	// Budgets are frame counts; each must match exactly one visual multiple-choice config after the
	// Policy/size filters. Empty: pick the longest chain of one policy and resolution automatically.
	Budgets       []int
	Policy        string
	Width, Height int // 0: any size
	Reference     int // frames of the reference fixed budget; 0: the largest budget
	Folds         int // ≥ 2: choose τ on K−1 folds, score the held-out fold; at most MaxFolds
	MaxCurve      int // most curve points in the output (0: 2000); the sweep itself visits every τ
}

// CascadePoint is the cascade at one threshold τ (escalate while confidence < τ).
type CascadePoint struct {
	Tau              float64  `json:"tau"`
	Accuracy         float64  `json:"accuracy"`
	FramesCost       float64  `json:"frames_cost"`
	SharedFramesCost float64  `json:"shared_frames_cost"`
	LatencyS         *float64 `json:"latency_s"`
	EscalatedRate    float64  `json:"escalated_rate"` // % of items that went past the first budget
}

// CascadeBudget is one fixed budget evaluated on the cascade's items.
type CascadeBudget struct {
	Config           string   `json:"config"`
	Frames           int      `json:"frames"`
	Accuracy         float64  `json:"accuracy"`
	SharedFramesCost float64  `json:"shared_frames_cost"`
	LatencyS         *float64 `json:"latency_s"`
	// Unparsed counts the budget's answers over the cascade's items that named no option letter:
	// any makes the cascade's accuracy and saving partly the answer parser's.
	Unparsed int `json:"unparsed"`
}

// UnparsedBudgets lists the budgets holding unparsed answers, with their share of the cascade's
// items ("f16 25%"); nil when none does.
func (cr *CascadeResult) UnparsedBudgets() []string {
	var out []string
	for _, b := range cr.Budgets {
		if b.Unparsed > 0 && cr.Items > 0 {
			out = append(out, fmt.Sprintf("%s %.0f%%", b.Config, 100*float64(b.Unparsed)/float64(cr.Items)))
		}
	}
	return out
}

// CascadeFold is one held-out fold.
type CascadeFold struct {
	Fold            int      `json:"fold"`
	Items           int      `json:"items"`
	Tau             *float64 `json:"tau"` // chosen on the other folds; null if no τ reached the reference there
	TrainAccuracy   *float64 `json:"train_accuracy"`
	HeldoutAccuracy *float64 `json:"heldout_accuracy"`
	HeldoutShared   *float64 `json:"heldout_shared_frames_cost"`
}

// CascadeResult is the τ sweep, the chosen τ and, with folds, the cross-fitted estimate.
type CascadeResult struct {
	Budgets           []CascadeBudget `json:"budgets"`
	Items             int             `json:"items"`
	Dropped           int             `json:"dropped"`
	DroppedReason     string          `json:"dropped_reason,omitempty"`
	Reference         string          `json:"reference"`
	ReferenceAccuracy float64         `json:"reference_accuracy"`
	ReferenceShared   float64         `json:"reference_shared_frames_cost"`
	ReferenceLatencyS *float64        `json:"reference_latency_s"`
	SharedCostBasis   string          `json:"shared_cost_basis"` // "index sets", "nested assumption" or "mixed"
	ItemsWithIndices  int             `json:"items_with_indices"`
	TauCount          int             `json:"tau_count"`
	Curve             []CascadePoint  `json:"curve"`
	CurveThinned      bool            `json:"curve_thinned"`
	Selected          *CascadePoint   `json:"selected"`
	SharedCostSaving  *float64        `json:"shared_cost_saving"` // % below the reference's shared cost
	// SelectedLatency is the same selection done for wall-clock time (smallest mean latency with accuracy
	// ≥ the reference's), present when every record carries latency_s; LatencySaving is its % below
	// the reference's latency.
	SelectedLatency *CascadePoint `json:"selected_latency"`
	LatencySaving   *float64      `json:"latency_saving"`
	Folds           int           `json:"folds"`
	FoldSeed        uint64        `json:"fold_seed"`
	FoldResults     []CascadeFold `json:"fold_results,omitempty"`
	// CrossFitted pools the held-out folds, each scored at the τ chosen on the other folds (its tau is 0:
	// the τ differs per fold, see FoldResults).
	CrossFitted *CascadePoint `json:"cross_fitted"`
}

// selectBudgets maps budgets to configs, or picks a chain automatically.
func selectBudgets(d *dataset.Dataset, opt Options) ([]int, string, error) {
	groups, keys := budgetGroups(d, opt.Cascade)
	if len(opt.Cascade.Budgets) > 0 {
		ks, err := givenBudgets(d, opt, groups, keys)
		return ks, "", err
	}
	// Automatic: the group with the most distinct frame counts (≥ 2, none repeated, confidences present),
	// ties by the default policy, then by group key.
	bestKey := ""
	var best []int
	for _, g := range keys {
		ks := groups[g]
		seen := map[int]bool{}
		ok := true
		for _, k := range ks {
			f := *d.Configs[k].Frames
			ok = ok && !seen[f]
			seen[f] = true
		}
		if !ok || len(ks) < 2 || !hasConfidence(d, ks[:len(ks)-1]) {
			continue
		}
		isDef := strings.HasPrefix(g, opt.DefaultPolicy+"|")
		bestDef := strings.HasPrefix(bestKey, opt.DefaultPolicy+"|")
		if best == nil || len(ks) > len(best) || (len(ks) == len(best) && isDef && !bestDef) {
			best, bestKey = ks, g
		}
	}
	if best == nil {
		return nil, "cascade skipped: no chain of ≥2 budgets of one policy and size with confidences (pass --budgets)", nil
	}
	sort.Slice(best, func(a, b int) bool { return *d.Configs[best[a]].Frames < *d.Configs[best[b]].Frames })
	return best, "", nil
}

// budgetGroups are the multiple-choice frame budgets the options allow, grouped by (policy, size,
// pipeline): the chains a cascade may escalate along; keys sorted.
func budgetGroups(d *dataset.Dataset, co CascadeOptions) (map[string][]int, []string) {
	groups := map[string][]int{}
	var keys []string
	for k, c := range d.Configs {
		switch {
		case c.Kind != "multiple_choice" || c.TextOnly || c.Frames == nil:
			continue
		case co.Policy != "" && c.Policy != co.Policy:
			continue
		case co.Width > 0 && (c.Width == nil || *c.Width != co.Width || c.Height == nil || *c.Height != co.Height):
			continue
		}
		key := c.Policy + "|" + c.SizeKey() + "|" + c.Pipeline
		if groups[key] == nil {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], k)
	}
	sort.Strings(keys)
	return groups, keys
}

// givenBudgets finds the chain of the budgets the options name: they must come from one group with
// one config per budget; several candidates are narrowed to the default policy, then to the raw
// pipeline, and any ambiguity left is an error naming the chains.
func givenBudgets(d *dataset.Dataset, opt Options, groups map[string][]int, keys []string) ([]int, error) {
	co := opt.Cascade
	for bi, b := range co.Budgets {
		if bi > 0 && b <= co.Budgets[bi-1] {
			return nil, record.Errorf("", 0, "cascade", ErrBadArgs, "budgets must increase: %v", co.Budgets)
		}
	}
	var fits [][]int
	var fitKeys []string
	for _, key := range keys {
		byFrames := map[int][]int{}
		for _, k := range groups[key] {
			byFrames[*d.Configs[k].Frames] = append(byFrames[*d.Configs[k].Frames], k)
		}
		var ks []int
		for _, b := range co.Budgets {
			if len(byFrames[b]) != 1 {
				ks = nil
				break
			}
			ks = append(ks, byFrames[b][0])
		}
		if ks != nil {
			fits, fitKeys = append(fits, ks), append(fitKeys, key)
		}
	}
	narrow := func(pred func(key string) bool) {
		var f2 [][]int
		var k2 []string
		for i, key := range fitKeys {
			if pred(key) {
				f2, k2 = append(f2, fits[i]), append(k2, key)
			}
		}
		if len(f2) > 0 {
			fits, fitKeys = f2, k2
		}
	}
	if len(fits) > 1 {
		narrow(func(key string) bool { return strings.HasPrefix(key, opt.DefaultPolicy+"|") })
	}
	if len(fits) > 1 {
		narrow(func(key string) bool { return !strings.HasSuffix(key, "|cached") })
	}
	switch {
	case len(fits) == 0:
		return nil, record.Errorf("", 0, "cascade", ErrBadArgs, "no single policy/size/pipeline has one multiple-choice config for each of the budgets %v", co.Budgets)
	case len(fits) > 1:
		var desc []string
		for i, key := range fitKeys {
			var ids []string
			for _, k := range fits[i] {
				ids = append(ids, d.Configs[k].ID)
			}
			desc = append(desc, fmt.Sprintf("%q: %q", key, ids))
		}
		return nil, record.Errorf("", 0, "cascade", ErrBadArgs, "budgets %v match several config chains (%s): choose with --policy or --size", co.Budgets, strings.Join(desc, "; "))
	}
	return fits[0], nil
}

func hasConfidence(d *dataset.Dataset, ks []int) bool {
	C := len(d.Configs)
	for _, k := range ks {
		found := false
		for i := range d.Items {
			if j := d.Grid[i*C+k]; j >= 0 && d.Recs[j].Confidence != nil {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// cascadeItem is one item's precomputed outcome for each stopping budget.
type cascadeItem struct {
	correct []bool
	frames  []int64   // Σ frames of budgets tried
	shared  []int64   // distinct frames decoded
	latency []float64 // Σ latency of budgets tried
	fold    int
}

type cascadeAgg struct {
	n, correct, escalated int
	frames, shared        int64
	latency               float64
}

func (a *cascadeAgg) add(it *cascadeItem, s int, sign int) {
	a.correct += sign * b2i(it.correct[s])
	a.frames += int64(sign) * it.frames[s]
	a.shared += int64(sign) * it.shared[s]
	if it.latency != nil {
		a.latency += float64(sign) * it.latency[s]
	}
	a.escalated += sign * b2i(s > 0)
}

func (a cascadeAgg) minus(b cascadeAgg) cascadeAgg {
	return cascadeAgg{n: a.n - b.n, correct: a.correct - b.correct, escalated: a.escalated - b.escalated,
		frames: a.frames - b.frames, shared: a.shared - b.shared, latency: a.latency - b.latency}
}

func (a cascadeAgg) point(tau float64, lat bool) CascadePoint {
	n := float64(a.n)
	p := CascadePoint{Tau: tau, Accuracy: 100 * float64(a.correct) / n, FramesCost: float64(a.frames) / n,
		SharedFramesCost: float64(a.shared) / n, EscalatedRate: 100 * float64(a.escalated) / n}
	if lat {
		l := a.latency / n
		p.LatencyS = &l
	}
	return p
}

// better reports whether candidate (correct c, shared s) beats the incumbent under the selection rule:
// lowest shared cost, then higher accuracy; the sweep visits τ ascending, so ties keep the smaller τ.
func better(c, s, bc, bs int64, have bool) bool {
	if !have {
		return true
	}
	if s != bs {
		return s < bs
	}
	return c > bc
}

func (a cascadeAgg) plus(b cascadeAgg) cascadeAgg {
	return cascadeAgg{n: a.n + b.n, correct: a.correct + b.correct, escalated: a.escalated + b.escalated,
		frames: a.frames + b.frames, shared: a.shared + b.shared, latency: a.latency + b.latency}
}

// runCascade is the offline cascade of METRICS.md over the dataset: the budgets' chain, the items
// that have every budget, each fixed budget on them, and the sweep of τ over every distinct
// confidence with the selection on all items and, with folds, on each training part.
func runCascade(d *dataset.Dataset, opt Options) (*CascadeResult, string, error) {
	// Each fold holds its own aggregates: a count from a file (export.json's folds) is bounded first.
	if err := num.In(0, MaxFolds).Int("folds", int64(opt.Cascade.Folds)); err != nil {
		return nil, "", record.Errorf("", 0, "cascade", ErrBadArgs, "%v", err)
	}
	ks, note, err := selectBudgets(d, opt)
	if err != nil || ks == nil {
		return nil, note, err
	}
	co := opt.Cascade
	cr := &CascadeResult{Folds: max(co.Folds, 1), FoldSeed: opt.Seed}
	ref, err := cascadeReference(d, ks, co.Reference)
	if err != nil {
		return nil, "", err
	}
	cr.Reference = d.Configs[ks[ref]].ID
	cs := cascadeItems(d, ks)
	items := cs.items
	cr.Items, cr.Dropped, cr.ItemsWithIndices = len(items), cs.missRec+cs.missConf, cs.withIdx
	if cr.Dropped > 0 {
		cr.DroppedReason = fmt.Sprintf("%d items lack a record in some budget, %d lack a confidence below the last budget", cs.missRec, cs.missConf)
	}
	switch {
	case cs.withIdx == len(items):
		cr.SharedCostBasis = "index sets"
	case cs.withIdx == 0:
		cr.SharedCostBasis = "nested assumption"
	default:
		cr.SharedCostBasis = "mixed"
	}
	if len(items) == 0 {
		return cr, "cascade: no item has a record in every budget", nil
	}
	cr.Budgets = fixedBudgets(d, ks, cs)
	refB := cr.Budgets[ref]
	cr.ReferenceAccuracy, cr.ReferenceShared, cr.ReferenceLatencyS = refB.Accuracy, refB.SharedFramesCost, refB.LatencyS
	assignFolds(items, cr.Folds, opt.Seed)
	events, taus := cascadeEvents(d, ks, cs.itemIDs)
	cr.TauCount = len(taus)
	sw := &tauSweep{items: items, ref: ref, K: cr.Folds, withLatency: cs.withLatency}
	sw.run(cr, events, taus, co.MaxCurve)
	sw.finish(cr)
	return cr, "", nil
}

// cascadeReference is the position in ks of the reference fixed budget (frames; 0: the largest).
func cascadeReference(d *dataset.Dataset, ks []int, frames int) (int, error) {
	if frames <= 0 {
		return len(ks) - 1, nil
	}
	ref := -1
	for j, k := range ks {
		if *d.Configs[k].Frames == frames {
			ref = j
		}
	}
	if ref < 0 {
		return 0, record.Errorf("", 0, "cascade", ErrBadArgs, "reference budget %d is not one of the cascade budgets", frames)
	}
	return ref, nil
}

// cascadeSet is the cascade's items: each with a record in every budget and a confidence in every
// budget but the last, and what was left out.
type cascadeSet struct {
	items             []cascadeItem
	itemIDs           []int // the dataset's item of each
	missRec, missConf int
	withIdx           int  // items whose every record carries its frame indices
	withLatency       bool // every record carries latency_s
}

func cascadeItems(d *dataset.Dataset, ks []int) cascadeSet {
	C, m := len(d.Configs), len(ks)
	cs := cascadeSet{withLatency: true}
	for i := range d.Items {
		present, any := true, false
		for _, k := range ks {
			if d.Grid[i*C+k] >= 0 {
				any = true
			} else {
				present = false
			}
		}
		if !any {
			continue
		}
		if !present {
			cs.missRec++
			continue
		}
		conf := true
		for _, k := range ks[:m-1] {
			conf = conf && d.Recs[d.Grid[i*C+k]].Confidence != nil
		}
		if !conf {
			cs.missConf++
			continue
		}
		it, allIdx := cascadeItemOf(d, ks, i, &cs.withLatency)
		if allIdx {
			cs.withIdx++
		}
		cs.items = append(cs.items, it)
		cs.itemIDs = append(cs.itemIDs, i)
	}
	if !cs.withLatency {
		for i := range cs.items {
			cs.items[i].latency = nil
		}
	}
	return cs
}

// cascadeItemOf is item i's outcome at each stopping budget, and whether every record gave its
// frame indices (else the shared cost takes the nested assumption). A record without latency clears
// *withLatency.
func cascadeItemOf(d *dataset.Dataset, ks []int, i int, withLatency *bool) (cascadeItem, bool) {
	C, m := len(d.Configs), len(ks)
	it := cascadeItem{correct: make([]bool, m), frames: make([]int64, m), shared: make([]int64, m), latency: make([]float64, m)}
	union := map[int]struct{}{}
	allIdx := true
	var fsum int64
	var lsum float64
	for j, k := range ks {
		r := &d.Recs[d.Grid[i*C+k]]
		it.correct[j] = *r.Correct
		fsum += int64(*d.Configs[k].Frames)
		it.frames[j] = fsum
		if r.LatencyS == nil {
			*withLatency = false
		} else {
			lsum += *r.LatencyS
		}
		it.latency[j] = lsum
		if r.ConfigMeta != nil && len(r.ConfigMeta.Indices) > 0 && allIdx {
			for _, x := range r.ConfigMeta.Indices {
				union[x] = struct{}{}
			}
			it.shared[j] = int64(len(union))
		} else {
			// Nested assumption: each budget's indices contain the smaller ones, so the distinct
			// frames decoded are the frames of the last budget tried.
			allIdx = false
			it.shared[j] = int64(*d.Configs[k].Frames)
		}
	}
	return it, allIdx
}

// fixedBudgets is each budget as a fixed config on the cascade's items (a fixed run decodes only its
// own frames).
func fixedBudgets(d *dataset.Dataset, ks []int, cs cascadeSet) []CascadeBudget {
	C := len(d.Configs)
	var out []CascadeBudget
	for j, k := range ks {
		var ok, up int
		var sh int64
		var l float64
		for ii, i := range cs.itemIDs {
			r := &d.Recs[d.Grid[i*C+k]]
			ok += b2i(cs.items[ii].correct[j])
			up += b2i(r.Unparsed)
			if r.ConfigMeta != nil && len(r.ConfigMeta.Indices) > 0 {
				sh += int64(len(distinct(r.ConfigMeta.Indices)))
			} else {
				sh += int64(*d.Configs[k].Frames)
			}
			if cs.withLatency {
				l += *r.LatencyS
			}
		}
		n := float64(len(cs.items))
		b := CascadeBudget{Config: d.Configs[k].ID, Frames: *d.Configs[k].Frames, Accuracy: 100 * float64(ok) / n, SharedFramesCost: float64(sh) / n, Unparsed: up}
		if cs.withLatency {
			lm := l / n
			b.LatencyS = &lm
		}
		out = append(out, b)
	}
	return out
}

// assignFolds puts the items in K folds: a seeded Fisher–Yates shuffle of the items (sorted by id),
// fold = position mod K.
func assignFolds(items []cascadeItem, K int, seed uint64) {
	perm := make([]int, len(items))
	for i := range perm {
		perm[i] = i
	}
	g := splitmix.Source{State: seed ^ fnv64a("cascade-folds")}
	for i := len(perm) - 1; i > 0; i-- {
		j := g.Intn(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	for pos, ii := range perm {
		items[ii].fold = pos % K
	}
}

// cascadeEvent: item moves to stopping budget to once τ exceeds t.
type cascadeEvent struct {
	t    float64
	item int32
	to   int16
}

// cascadeEvents are the items' moves as τ grows (prefix-maximum confidences; see METRICS.md), sorted
// by threshold, and the τ to visit: every distinct confidence and one above them all (always escalate
// to the last budget).
func cascadeEvents(d *dataset.Dataset, ks []int, itemIDs []int) ([]cascadeEvent, []float64) {
	C, m := len(d.Configs), len(ks)
	var events []cascadeEvent
	var confs []float64
	for ii, i := range itemIDs {
		for _, k := range ks[:m-1] {
			confs = append(confs, *d.Recs[d.Grid[i*C+k]].Confidence)
		}
		s := 0
		for s < m-1 {
			cs := *d.Recs[d.Grid[i*C+ks[s]]].Confidence
			next := m - 1
			for j := s + 1; j < m-1; j++ {
				if *d.Recs[d.Grid[i*C+ks[j]]].Confidence > cs {
					next = j
					break
				}
			}
			events = append(events, cascadeEvent{t: cs, item: int32(ii), to: int16(next)})
			s = next
		}
	}
	slices.Sort(confs)
	taus := make([]float64, 0, len(confs)+1)
	for i, c := range confs {
		if i == 0 || c != confs[i-1] {
			taus = append(taus, c)
		}
	}
	taus = append(taus, math.Nextafter(taus[len(taus)-1], math.Inf(1)))
	slices.SortFunc(events, func(a, b cascadeEvent) int { return cmp.Compare(a.t, b.t) })
	return events, taus
}

// tauPick is a selected τ with its counts on the items it was chosen on (train) and scored on.
type tauPick struct {
	have            bool
	tau             float64
	correct, shared int64
	heldout, train  cascadeAgg
}

// tauSweep visits τ ascending, moving items between stopping budgets as their events pass, and keeps
// the selection: on all items (Selected, and by latency), and per fold on the other folds.
type tauSweep struct {
	items       []cascadeItem
	ref, K      int
	withLatency bool
	folds       []cascadeAgg // per fold, the current aggregate
	refCorrect  []int        // per fold, items the reference budget gets right
	sel         tauPick
	selLat      *CascadePoint
	foldPick    []tauPick
}

func (sw *tauSweep) run(cr *CascadeResult, events []cascadeEvent, taus []float64, maxCurve int) {
	if maxCurve <= 0 {
		maxCurve = 2000
	}
	keep := func(ti int) bool { return true }
	if len(taus) > maxCurve {
		cr.CurveThinned = true
		keepSet := map[int]bool{}
		for q := 0; q < maxCurve; q++ {
			keepSet[int(math.Round(float64(q)*float64(len(taus)-1)/float64(maxCurve-1)))] = true
		}
		keep = func(ti int) bool { return keepSet[ti] }
	}
	state := make([]int16, len(sw.items))
	sw.folds, sw.refCorrect, sw.foldPick = make([]cascadeAgg, sw.K), make([]int, sw.K), make([]tauPick, sw.K)
	for ii := range sw.items {
		it := &sw.items[ii]
		sw.folds[it.fold].n++
		sw.folds[it.fold].add(it, 0, 1)
		sw.refCorrect[it.fold] += b2i(it.correct[sw.ref])
	}
	refTotal := 0
	for _, c := range sw.refCorrect {
		refTotal += c
	}
	ev := 0
	for ti, tau := range taus {
		for ev < len(events) && events[ev].t < tau {
			e := events[ev]
			it := &sw.items[e.item]
			sw.folds[it.fold].add(it, int(state[e.item]), -1)
			state[e.item] = e.to
			sw.folds[it.fold].add(it, int(e.to), 1)
			ev++
		}
		var all cascadeAgg
		for _, f := range sw.folds {
			all = all.plus(f)
		}
		sw.consider(tau, all, refTotal)
		if keep(ti) {
			cr.Curve = append(cr.Curve, all.point(tau, sw.withLatency))
		}
	}
}

// consider updates the selections with τ, whose aggregate over all items is all.
func (sw *tauSweep) consider(tau float64, all cascadeAgg, refTotal int) {
	// accuracy ≥ reference ⇔ correct·n_ref ≥ refCorrect·n: integer comparison, no rounding.
	if all.correct >= refTotal && better(int64(all.correct), all.shared, sw.sel.correct, sw.sel.shared, sw.sel.have) {
		sw.sel = tauPick{have: true, tau: tau, correct: int64(all.correct), shared: all.shared, heldout: all}
	}
	if sw.withLatency && all.correct >= refTotal && (sw.selLat == nil || all.latency/float64(all.n) < *sw.selLat.LatencyS ||
		(all.latency/float64(all.n) == *sw.selLat.LatencyS && 100*float64(all.correct)/float64(all.n) > sw.selLat.Accuracy)) {
		p := all.point(tau, true)
		sw.selLat = &p
	}
	if sw.K < 2 {
		return
	}
	for f := 0; f < sw.K; f++ {
		tr := all.minus(sw.folds[f])
		refTr := refTotal - sw.refCorrect[f]
		if tr.correct >= refTr && better(int64(tr.correct), tr.shared, sw.foldPick[f].correct, sw.foldPick[f].shared, sw.foldPick[f].have) {
			sw.foldPick[f] = tauPick{have: true, tau: tau, correct: int64(tr.correct), shared: tr.shared, heldout: sw.folds[f], train: tr}
		}
	}
}

// finish writes the selections into cr: the selected τ and its savings, and with folds each fold's
// τ and the cross-fitted result pooled over the held-out folds.
func (sw *tauSweep) finish(cr *CascadeResult) {
	if sw.sel.have {
		p := sw.sel.heldout.point(sw.sel.tau, sw.withLatency)
		cr.Selected = &p
		if cr.ReferenceShared > 0 {
			s := 100 * (1 - p.SharedFramesCost/cr.ReferenceShared)
			cr.SharedCostSaving = &s
		}
	}
	if sw.selLat != nil {
		cr.SelectedLatency = sw.selLat
		if *cr.ReferenceLatencyS > 0 {
			s := 100 * (1 - *sw.selLat.LatencyS / *cr.ReferenceLatencyS)
			cr.LatencySaving = &s
		}
	}
	if sw.K < 2 {
		return
	}
	var pooled cascadeAgg
	complete := true
	for f := 0; f < sw.K; f++ {
		fr := CascadeFold{Fold: f, Items: sw.folds[f].n}
		fp := sw.foldPick[f]
		if fp.have && fp.heldout.n > 0 {
			t := fp.tau
			ta := 100 * float64(fp.train.correct) / float64(fp.train.n)
			ha := 100 * float64(fp.heldout.correct) / float64(fp.heldout.n)
			hs := float64(fp.heldout.shared) / float64(fp.heldout.n)
			fr.Tau, fr.TrainAccuracy, fr.HeldoutAccuracy, fr.HeldoutShared = &t, &ta, &ha, &hs
			pooled = pooled.plus(fp.heldout)
		} else if sw.folds[f].n > 0 {
			complete = false
		}
		cr.FoldResults = append(cr.FoldResults, fr)
	}
	if complete && pooled.n > 0 {
		p := pooled.point(0, sw.withLatency)
		cr.CrossFitted = &p
	}
}

func distinct(xs []int) map[int]struct{} {
	m := make(map[int]struct{}, len(xs))
	for _, x := range xs {
		m[x] = struct{}{}
	}
	return m
}
