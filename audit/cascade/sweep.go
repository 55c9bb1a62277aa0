package cascade

import (
	"cmp"
	"hash/fnv"
	"math"
	"slices"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/internal/splitmix"
)

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

func (a cascadeAgg) point(tau float64, lat bool) Point {
	n := float64(a.n)
	p := Point{Tau: tau, Accuracy: 100 * float64(a.correct) / n, FramesCost: float64(a.frames) / n,
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

// assignFolds puts the items in K folds: a seeded Fisher–Yates shuffle of the items (sorted by id),
// fold = position mod K.
func assignFolds(items []cascadeItem, K int, seed uint64) {
	perm := make([]int, len(items))
	for i := range perm {
		perm[i] = i
	}
	h := fnv.New64a()
	h.Write([]byte("cascade-folds")) // FNV-1a, as the audit names its bootstrap scopes
	g := splitmix.Source{State: seed ^ h.Sum64()}
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
	selLat      *Point
	foldPick    []tauPick
}

func (sw *tauSweep) run(cr *Result, events []cascadeEvent, taus []float64, maxCurve int) {
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
func (sw *tauSweep) finish(cr *Result) {
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
		fr := Fold{Fold: f, Items: sw.folds[f].n}
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

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
