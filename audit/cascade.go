package audit

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/record"
)

// CascadeOptions choose the budgets of a confidence cascade (METRICS.md "Confidence cascade").
type CascadeOptions struct {
	// Budgets are frame counts; each must match exactly one visual multiple-choice config after the
	// Policy/size filters. Empty: pick the longest chain of one policy and resolution automatically.
	Budgets       []int
	Policy        string
	Width, Height int // 0: any size
	Reference     int // frames of the reference fixed budget; 0: the largest budget
	Folds         int // ≥ 2: choose τ on K−1 folds, score the held-out fold
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
func selectBudgets(d *dataset, opt Options) ([]int, string, error) {
	co := opt.Cascade
	var cand []int
	for k, c := range d.configs {
		if c.Kind != "multiple_choice" || c.TextOnly || c.Frames == nil {
			continue
		}
		if co.Policy != "" && c.Policy != co.Policy {
			continue
		}
		if co.Width > 0 && (c.Width == nil || *c.Width != co.Width || c.Height == nil || *c.Height != co.Height) {
			continue
		}
		cand = append(cand, k)
	}
	groups := map[string][]int{}
	var keys []string
	for _, k := range cand {
		c := d.configs[k]
		key := c.Policy + "|" + c.sizeKey() + "|" + c.Pipeline
		if groups[key] == nil {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], k)
	}
	sort.Strings(keys)
	if len(co.Budgets) > 0 {
		for bi, b := range co.Budgets {
			if bi > 0 && b <= co.Budgets[bi-1] {
				return nil, "", record.Errorf("", 0, "cascade", ErrBadArgs, "budgets must increase: %v", co.Budgets)
			}
		}
		// The budgets must come from one (policy, size, pipeline) group; several candidates are narrowed
		// to the default policy, then to the raw pipeline.
		var fits [][]int
		var fitKeys []string
		for _, key := range keys {
			byFrames := map[int][]int{}
			for _, k := range groups[key] {
				byFrames[*d.configs[k].Frames] = append(byFrames[*d.configs[k].Frames], k)
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
			return nil, "", record.Errorf("", 0, "cascade", ErrBadArgs, "no single policy/size/pipeline has one multiple-choice config for each of the budgets %v", co.Budgets)
		case len(fits) > 1:
			var desc []string
			for i, key := range fitKeys {
				var ids []string
				for _, k := range fits[i] {
					ids = append(ids, d.configs[k].ID)
				}
				desc = append(desc, fmt.Sprintf("%q: %q", key, ids))
			}
			return nil, "", record.Errorf("", 0, "cascade", ErrBadArgs, "budgets %v match several config chains (%s): choose with --policy or --size", co.Budgets, strings.Join(desc, "; "))
		}
		return fits[0], "", nil
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
			f := *d.configs[k].Frames
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
	sort.Slice(best, func(a, b int) bool { return *d.configs[best[a]].Frames < *d.configs[best[b]].Frames })
	return best, "", nil
}

func hasConfidence(d *dataset, ks []int) bool {
	C := len(d.configs)
	for _, k := range ks {
		found := false
		for i := range d.items {
			if j := d.grid[i*C+k]; j >= 0 && d.recs[j].Confidence != nil {
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

func runCascade(d *dataset, opt Options) (*CascadeResult, string, error) {
	ks, note, err := selectBudgets(d, opt)
	if err != nil || ks == nil {
		return nil, note, err
	}
	co := opt.Cascade
	C, m := len(d.configs), len(ks)
	cr := &CascadeResult{Folds: max(co.Folds, 1), FoldSeed: opt.Seed}
	ref := m - 1
	if co.Reference > 0 {
		ref = -1
		for j, k := range ks {
			if *d.configs[k].Frames == co.Reference {
				ref = j
			}
		}
		if ref < 0 {
			return nil, "", record.Errorf("", 0, "cascade", ErrBadArgs, "reference budget %d is not one of the cascade budgets", co.Reference)
		}
	}
	cr.Reference = d.configs[ks[ref]].ID
	// Items: a record in every budget and a confidence in every budget but the last.
	var items []cascadeItem
	missRec, missConf := 0, 0
	withLatency := true
	withIdx := 0
	var itemIDs []int
	for i := range d.items {
		present, any := true, false
		for _, k := range ks {
			if d.grid[i*C+k] >= 0 {
				any = true
			} else {
				present = false
			}
		}
		if !any {
			continue
		}
		if !present {
			missRec++
			continue
		}
		conf := true
		for _, k := range ks[:m-1] {
			conf = conf && d.recs[d.grid[i*C+k]].Confidence != nil
		}
		if !conf {
			missConf++
			continue
		}
		it := cascadeItem{correct: make([]bool, m), frames: make([]int64, m), shared: make([]int64, m)}
		lat := make([]float64, m)
		union := map[int]struct{}{}
		allIdx := true
		var fsum int64
		var lsum float64
		for j, k := range ks {
			r := &d.recs[d.grid[i*C+k]]
			it.correct[j] = *r.Correct
			fsum += int64(*d.configs[k].Frames)
			it.frames[j] = fsum
			if r.LatencyS == nil {
				withLatency = false
			} else {
				lsum += *r.LatencyS
			}
			lat[j] = lsum
			if r.ConfigMeta != nil && len(r.ConfigMeta.Indices) > 0 && allIdx {
				for _, x := range r.ConfigMeta.Indices {
					union[x] = struct{}{}
				}
				it.shared[j] = int64(len(union))
			} else {
				// Nested assumption: each budget's indices contain the smaller ones, so the distinct
				// frames decoded are the frames of the last budget tried.
				allIdx = false
				it.shared[j] = int64(*d.configs[k].Frames)
			}
		}
		if allIdx {
			withIdx++
		}
		it.latency = lat
		items = append(items, it)
		itemIDs = append(itemIDs, i)
	}
	cr.Items, cr.Dropped, cr.ItemsWithIndices = len(items), missRec+missConf, withIdx
	if cr.Dropped > 0 {
		cr.DroppedReason = fmt.Sprintf("%d items lack a record in some budget, %d lack a confidence below the last budget", missRec, missConf)
	}
	switch {
	case withIdx == len(items):
		cr.SharedCostBasis = "index sets"
	case withIdx == 0:
		cr.SharedCostBasis = "nested assumption"
	default:
		cr.SharedCostBasis = "mixed"
	}
	if len(items) == 0 {
		return cr, "cascade: no item has a record in every budget", nil
	}
	if !withLatency {
		for i := range items {
			items[i].latency = nil
		}
	}
	// Fixed budgets on the same items (a fixed run decodes only its own frames).
	for j, k := range ks {
		var ok int
		var sh int64
		var l float64
		for ii, i := range itemIDs {
			r := &d.recs[d.grid[i*C+k]]
			ok += b2i(items[ii].correct[j])
			if r.ConfigMeta != nil && len(r.ConfigMeta.Indices) > 0 {
				sh += int64(len(distinct(r.ConfigMeta.Indices)))
			} else {
				sh += int64(*d.configs[k].Frames)
			}
			if withLatency {
				l += *r.LatencyS
			}
		}
		n := float64(len(items))
		b := CascadeBudget{Config: d.configs[k].ID, Frames: *d.configs[k].Frames, Accuracy: 100 * float64(ok) / n, SharedFramesCost: float64(sh) / n}
		if withLatency {
			lm := l / n
			b.LatencyS = &lm
		}
		cr.Budgets = append(cr.Budgets, b)
	}
	refB := cr.Budgets[ref]
	cr.ReferenceAccuracy, cr.ReferenceShared, cr.ReferenceLatencyS = refB.Accuracy, refB.SharedFramesCost, refB.LatencyS
	// Folds: a seeded Fisher–Yates shuffle of the items (sorted by id), fold = position mod K.
	K := cr.Folds
	perm := make([]int, len(items))
	for i := range perm {
		perm[i] = i
	}
	g := NewSplitMix64(opt.Seed ^ fnv64a("cascade-folds"))
	for i := len(perm) - 1; i > 0; i-- {
		j := g.Intn(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	for pos, ii := range perm {
		items[ii].fold = pos % K
	}
	// Events: item ii moves to state s once τ exceeds t (prefix-maximum confidences; see METRICS.md).
	type event struct {
		t    float64
		item int32
		to   int16
	}
	var events []event
	var confs []float64
	for ii, i := range itemIDs {
		for _, k := range ks[:m-1] {
			confs = append(confs, *d.recs[d.grid[i*C+k]].Confidence)
		}
		s := 0
		for s < m-1 {
			cs := *d.recs[d.grid[i*C+ks[s]]].Confidence
			next := m - 1
			for j := s + 1; j < m-1; j++ {
				if *d.recs[d.grid[i*C+ks[j]]].Confidence > cs {
					next = j
					break
				}
			}
			events = append(events, event{t: cs, item: int32(ii), to: int16(next)})
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
	// One τ above every confidence: always escalate to the last budget.
	taus = append(taus, math.Nextafter(taus[len(taus)-1], math.Inf(1)))
	slices.SortFunc(events, func(a, b event) int { return cmp.Compare(a.t, b.t) })
	cr.TauCount = len(taus)
	maxCurve := co.MaxCurve
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
	state := make([]int16, len(items))
	folds := make([]cascadeAgg, K)
	refCorrect := make([]int, K)
	for ii := range items {
		it := &items[ii]
		folds[it.fold].n++
		folds[it.fold].add(it, 0, 1)
		refCorrect[it.fold] += b2i(it.correct[ref])
	}
	total := func() cascadeAgg {
		var t cascadeAgg
		for _, f := range folds {
			t.n += f.n
			t.correct += f.correct
			t.escalated += f.escalated
			t.frames += f.frames
			t.shared += f.shared
			t.latency += f.latency
		}
		return t
	}
	refTotal := 0
	for _, c := range refCorrect {
		refTotal += c
	}
	type pick struct {
		have            bool
		tau             float64
		correct, shared int64
		heldout, train  cascadeAgg
	}
	var sel pick
	var selLat *CascadePoint
	foldPick := make([]pick, K)
	ev := 0
	for ti, tau := range taus {
		for ev < len(events) && events[ev].t < tau {
			e := events[ev]
			it := &items[e.item]
			folds[it.fold].add(it, int(state[e.item]), -1)
			state[e.item] = e.to
			folds[it.fold].add(it, int(e.to), 1)
			ev++
		}
		all := total()
		// accuracy ≥ reference ⇔ correct·n_ref ≥ refCorrect·n: integer comparison, no rounding.
		if all.correct >= refTotal && better(int64(all.correct), all.shared, sel.correct, sel.shared, sel.have) {
			sel = pick{have: true, tau: tau, correct: int64(all.correct), shared: all.shared, heldout: all}
		}
		if withLatency && all.correct >= refTotal && (selLat == nil || all.latency/float64(all.n) < *selLat.LatencyS ||
			(all.latency/float64(all.n) == *selLat.LatencyS && 100*float64(all.correct)/float64(all.n) > selLat.Accuracy)) {
			p := all.point(tau, true)
			selLat = &p
		}
		if K > 1 {
			for f := 0; f < K; f++ {
				tr := all.minus(folds[f])
				refTr := refTotal - refCorrect[f]
				if tr.correct >= refTr && better(int64(tr.correct), tr.shared, foldPick[f].correct, foldPick[f].shared, foldPick[f].have) {
					foldPick[f] = pick{have: true, tau: tau, correct: int64(tr.correct), shared: tr.shared, heldout: folds[f], train: tr}
				}
			}
		}
		if keep(ti) {
			cr.Curve = append(cr.Curve, all.point(tau, withLatency))
		}
	}
	if sel.have {
		p := sel.heldout.point(sel.tau, withLatency)
		cr.Selected = &p
		if cr.ReferenceShared > 0 {
			s := 100 * (1 - p.SharedFramesCost/cr.ReferenceShared)
			cr.SharedCostSaving = &s
		}
	}
	if selLat != nil {
		cr.SelectedLatency = selLat
		if *cr.ReferenceLatencyS > 0 {
			s := 100 * (1 - *selLat.LatencyS / *cr.ReferenceLatencyS)
			cr.LatencySaving = &s
		}
	}
	if K > 1 {
		var pooled cascadeAgg
		complete := true
		for f := 0; f < K; f++ {
			fr := CascadeFold{Fold: f, Items: folds[f].n}
			fp := foldPick[f]
			if fp.have && fp.heldout.n > 0 {
				t := fp.tau
				ta := 100 * float64(fp.train.correct) / float64(fp.train.n)
				ha := 100 * float64(fp.heldout.correct) / float64(fp.heldout.n)
				hs := float64(fp.heldout.shared) / float64(fp.heldout.n)
				fr.Tau, fr.TrainAccuracy, fr.HeldoutAccuracy, fr.HeldoutShared = &t, &ta, &ha, &hs
				pooled.n += fp.heldout.n
				pooled.correct += fp.heldout.correct
				pooled.escalated += fp.heldout.escalated
				pooled.frames += fp.heldout.frames
				pooled.shared += fp.heldout.shared
				pooled.latency += fp.heldout.latency
			} else if folds[f].n > 0 {
				complete = false
			}
			cr.FoldResults = append(cr.FoldResults, fr)
		}
		if complete && pooled.n > 0 {
			p := pooled.point(0, withLatency)
			cr.CrossFitted = &p
		}
	}
	return cr, "", nil
}

func distinct(xs []int) map[int]struct{} {
	m := make(map[int]struct{}, len(xs))
	for _, x := range xs {
		m[x] = struct{}{}
	}
	return m
}
