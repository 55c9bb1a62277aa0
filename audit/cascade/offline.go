package cascade

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/audit/dataset"
	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/record"
)

// Offline runs only the confidence cascade of an audit (`framesweep cascade`) on records: the error
// records left out, the rest arranged as a dataset, then Run. Errors not tied to one line name the
// records' file(s).
func Offline(recs []record.Record, co Options, seed uint64, defaultPolicy string) (*Result, string, error) {
	recs = dataset.Answered(recs)
	d, err := dataset.Build(recs)
	var cr *Result
	note := ""
	if err == nil {
		cr, note, err = Run(d, co, seed, defaultPolicy)
	}
	var ae *record.Error
	if errors.As(err, &ae) && ae.Path == "" {
		ae.Path = dataset.SourcePaths(recs)
	}
	return cr, note, err
}

// Check is nil for a cascade over some item; otherwise the error of a cascade that could not run (nil,
// with Offline's note why) or holds no item (with the items it dropped), naming the inputs (from).
func Check(cr *Result, why, from string) error {
	if cr != nil && cr.Items > 0 {
		return nil
	}
	if cr != nil && cr.DroppedReason != "" {
		why += " (" + cr.DroppedReason + ")"
	}
	return fmt.Errorf("%s: %s", from, why)
}

// selectBudgets maps budgets to configs, or picks a chain automatically.
func selectBudgets(d *dataset.Dataset, co Options, defaultPolicy string) ([]int, string, error) {
	groups, keys := budgetGroups(d, co)
	if len(co.Budgets) > 0 {
		ks, err := givenBudgets(d, co, defaultPolicy, groups, keys)
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
		isDef := strings.HasPrefix(g, defaultPolicy+"|")
		bestDef := strings.HasPrefix(bestKey, defaultPolicy+"|")
		if best == nil || len(ks) > len(best) || (len(ks) == len(best) && isDef && !bestDef) {
			best, bestKey = ks, g
		}
	}
	if best == nil {
		return nil, "cascade skipped: no chain of ≥2 budgets of one policy and size with confidences (pass --cascade)", nil
	}
	sort.Slice(best, func(a, b int) bool { return *d.Configs[best[a]].Frames < *d.Configs[best[b]].Frames })
	return best, "", nil
}

// budgetGroups are the multiple-choice frame budgets the options allow, grouped by (policy, size,
// pipeline): the chains a cascade may escalate along; keys sorted.
func budgetGroups(d *dataset.Dataset, co Options) (map[string][]int, []string) {
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
func givenBudgets(d *dataset.Dataset, co Options, defaultPolicy string, groups map[string][]int, keys []string) ([]int, error) {
	for bi, b := range co.Budgets {
		if bi > 0 && b <= co.Budgets[bi-1] {
			return nil, record.Errorf("", 0, "cascade", dataset.ErrBadArgs, "budgets must increase: %v", co.Budgets)
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
		narrow(func(key string) bool { return strings.HasPrefix(key, defaultPolicy+"|") })
	}
	if len(fits) > 1 {
		narrow(func(key string) bool { return !strings.HasSuffix(key, "|cached") })
	}
	switch {
	case len(fits) == 0:
		return nil, record.Errorf("", 0, "cascade", dataset.ErrBadArgs, "no single policy/size/pipeline has one multiple-choice config for each of the budgets %v", co.Budgets)
	case len(fits) > 1:
		var desc []string
		for i, key := range fitKeys {
			var ids []string
			for _, k := range fits[i] {
				ids = append(ids, d.Configs[k].ID)
			}
			desc = append(desc, fmt.Sprintf("%q: %q", key, ids))
		}
		return nil, record.Errorf("", 0, "cascade", dataset.ErrBadArgs, "budgets %v match several config chains (%s): choose with --cascade-policy or --cascade-size", co.Budgets, strings.Join(desc, "; "))
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

// Run is the offline cascade of METRICS.md over the dataset (seed: the folds' shuffle; defaultPolicy:
// the main grid's sampling policy, which breaks ties between budget chains): the budgets' chain, the items
// that have every budget, each fixed budget on them, and the sweep of τ over every distinct
// confidence with the selection on all items and, with folds, on each training part. A nil result
// comes with a note saying why no cascade could be run.
func Run(d *dataset.Dataset, co Options, seed uint64, defaultPolicy string) (*Result, string, error) {
	// Each fold holds its own aggregates: a count from a file (export.json's folds) is bounded first.
	if err := num.In(0, MaxFolds).Int("folds", int64(co.Folds)); err != nil {
		return nil, "", record.Errorf("", 0, "cascade", dataset.ErrBadArgs, "%v", err)
	}
	ks, note, err := selectBudgets(d, co, defaultPolicy)
	if err != nil || ks == nil {
		return nil, note, err
	}
	cr := &Result{Folds: max(co.Folds, 1), FoldSeed: seed}
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
	assignFolds(items, cr.Folds, seed)
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
		return 0, record.Errorf("", 0, "cascade", dataset.ErrBadArgs, "reference budget %d is not one of the cascade budgets", frames)
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
func fixedBudgets(d *dataset.Dataset, ks []int, cs cascadeSet) []Budget {
	C := len(d.Configs)
	var out []Budget
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
		b := Budget{Config: d.Configs[k].ID, Frames: *d.Configs[k].Frames, Accuracy: 100 * float64(ok) / n, SharedFramesCost: float64(sh) / n, Unparsed: up}
		if cs.withLatency {
			lm := l / n
			b.LatencyS = &lm
		}
		out = append(out, b)
	}
	return out
}

func distinct(xs []int) map[int]struct{} {
	m := make(map[int]struct{}, len(xs))
	for _, x := range xs {
		m[x] = struct{}{}
	}
	return m
}
