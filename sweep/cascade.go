package sweep

import (
	"context"
	"fmt"
	"sync"

	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

// An online confidence cascade (METRICS.md "Confidence cascade", run live; Options.Cascade): each item
// is asked at the lowest budget and escalates to the next while its confidence (the largest option
// probability) is below the threshold, stopping at the top budget. The video driver (video.go) runs
// it as one round per budget; the ladder decides who is asked in each round and annotates the records.

// checkCascade checks a cascade's budgets and threshold (the grid is checked by cascadeSteps).
func checkCascade(c *runs.Cascade) error {
	if len(c.Budgets) < 2 {
		return optErr("--cascade needs at least two budgets, got %v", c.Budgets)
	}
	if !(c.Threshold >= 0 && c.Threshold <= 1) {
		return optErr("--threshold %v is not a probability in [0, 1]", c.Threshold)
	}
	for i := 1; i < len(c.Budgets); i++ {
		if c.Budgets[i] <= c.Budgets[i-1] {
			return optErr("--cascade budgets must increase: %v", c.Budgets)
		}
	}
	return nil
}

// cascadeSteps returns the grid's configs of the cascade, lowest budget first; the grid must hold
// exactly one config per budget of one family (policy or preset, resolution, pipeline, seed) and no
// other configs, so there is no question which chain is escalated.
func cascadeSteps(g *grid.Grid, c *runs.Cascade) ([]*grid.Config, error) {
	if err := checkCascade(c); err != nil {
		return nil, err
	}
	byFrames := map[int]*grid.Config{}
	family := ""
	for i := range g.Configs {
		cfg := &g.Configs[i]
		if cfg.TextOnly || cfg.Frames == 0 {
			return nil, optErr("--cascade: the grid's config %s is not a frame budget (run text-only and fps configs in a sweep of their own)", cfg.ID)
		}
		fam := fmt.Sprintf("%s%s|%s|%s|%d", cfg.Policy, cfg.Preset, cfg.Resolution, cfg.Pipeline, cfg.Seed)
		if family != "" && fam != family {
			return nil, optErr("--cascade: the grid holds more than one chain (%s and %s differ beyond the budget); give it one policy, resolution, pipeline and seed", g.Configs[0].ID, cfg.ID)
		}
		family = fam
		byFrames[cfg.Frames] = cfg
	}
	var steps []*grid.Config
	for _, b := range c.Budgets {
		cfg := byFrames[b]
		if cfg == nil {
			return nil, optErr("--cascade: budget %d is not one of the grid's frames", b)
		}
		steps = append(steps, cfg)
	}
	if len(steps) != len(g.Configs) {
		return nil, optErr("--cascade %v: the grid has %d configs; list exactly the cascade's budgets in its frames", c.Budgets, len(g.Configs))
	}
	return steps, nil
}

// ladder is an online cascade in progress: its steps and where each item stands.
type ladder struct {
	c     *runs.Cascade
	steps []*grid.Config
	mu    sync.Mutex            // guards the items' states while answers of one video are recorded
	state map[string]*itemState // made before the videos run; each item is touched by its video alone
}

// itemState is where an item stands in the cascade.
type itemState struct {
	next     int // index of the next step to ask
	final    bool
	fed      int
	distinct map[int]bool
}

func (st *itemState) active(steps int) bool { return !st.final && st.next < steps }

// newLadder rebuilds each item's position from the records already in the RUN (a resume). An error
// record counts only where it stands as its pair's record (keepsError): one an answer superseded, or
// of a pair this session asks again, leaves the item at that step.
func newLadder(ctx context.Context, w *runs.Writer, c *runs.Cascade, steps []*grid.Config, keepsError func(record.Pair) bool) (*ladder, error) {
	l := &ladder{c: c, steps: steps, state: map[string]*itemState{}}
	stepOf := map[string]int{}
	for i, c := range steps {
		stepOf[c.ID] = i
	}
	err := w.Scan(ctx, func(r *record.Full) {
		k, ok := stepOf[r.Config]
		if !ok || (r.Failed() && !keepsError(r.Key())) {
			return
		}
		st := l.item(r.ItemID)
		st.next = max(st.next, k+1)
		if r.Cascade != nil {
			st.final = st.final || r.Cascade.Final
			st.fed = max(st.fed, r.Cascade.FramesFed)
		}
		if r.ConfigMeta != nil {
			for _, x := range r.ConfigMeta.Indices {
				st.distinct[x] = true
			}
		}
	})
	return l, err
}

func (l *ladder) item(id string) *itemState {
	st := l.state[id]
	if st == nil {
		st = &itemState{distinct: map[int]bool{}}
		l.state[id] = st
	}
	return st
}

// addItems makes the items' states and returns how many still escalate.
func (l *ladder) addItems(its []*items.Item) int {
	n := 0
	for _, it := range its {
		if l.item(it.ItemID).active(len(l.steps)) {
			n++
		}
	}
	return n
}

// round is step k's work on a video: the items standing at it.
func (l *ladder) round(its []*items.Item, k int) []ask {
	var at []*items.Item
	for _, it := range its {
		if st := l.state[it.ItemID]; st.active(len(l.steps)) && st.next == k {
			at = append(at, it)
		}
	}
	if len(at) == 0 {
		return nil
	}
	return []ask{{cfg: l.steps[k], items: at, step: k}}
}

// annotate adds the cascade step to r, the record of item id at step k, and moves the item on: an
// answer confident enough, at the top budget, or an error is final. in is the step's input (nil for an
// error before it was built); buildS is its build, wallS the build and this answer.
func (l *ladder) annotate(r *record.Full, k int, in *input, buildS, wallS float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.state[r.ItemID]
	final := true
	cs := &record.CascadeStep{Threshold: l.c.Threshold, Budgets: l.c.Budgets, Step: k + 1}
	if in != nil && in.Job != nil {
		st.fed += in.Job.Frames()
		for _, x := range in.Job.Selection.Indices {
			st.distinct[x] = true
		}
		conf := 0.0 // a runtime without probabilities is never confident
		if r.Confidence != nil {
			conf = *r.Confidence
		}
		final = r.Status == record.StatusError || conf >= l.c.Threshold || k == len(l.steps)-1
		cs.StepBuildS, cs.StepWallS = round3(buildS), round3(wallS)
		st.next = k + 1
	}
	cs.Final, cs.FramesFed, cs.FramesDistinct = final, st.fed, len(st.distinct)
	if final {
		cs.StoppedAt = l.steps[k].Frames
	}
	st.final = final
	r.Cascade = cs
}

// CascadeSummary is an online cascade's outcome over this shard's items (all sessions).
type CascadeSummary struct {
	Budgets   []int       `json:"budgets"`
	Threshold float64     `json:"threshold"`
	From      string      `json:"threshold_from,omitempty"`
	Items     int         `json:"items"`
	Final     int         `json:"items_final"`
	StoppedAt map[int]int `json:"stopped_at"` // budget → items that stopped there
	// Means over the final items: frames fed over every step asked, and the distinct frames of the
	// index sets tried (the shared frame cost of METRICS.md).
	MeanFramesFed      float64 `json:"mean_frames_fed"`
	MeanFramesDistinct float64 `json:"mean_frames_distinct"`
	FramesHeldPeak     int     `json:"frames_held_peak"` // most source-size frames kept for later steps, any video
}

func (l *ladder) summary(sum *Summary) *CascadeSummary {
	cs := &CascadeSummary{Budgets: l.c.Budgets, Threshold: l.c.Threshold, From: l.c.From, StoppedAt: map[int]int{}, Items: sum.Items}
	var fed, dist float64
	for _, vsum := range sum.PerVideo {
		cs.FramesHeldPeak = max(cs.FramesHeldPeak, vsum.FramesHeld)
	}
	for _, st := range l.state {
		if !st.final {
			continue
		}
		cs.Final++
		if st.next >= 1 && st.next <= len(l.steps) {
			cs.StoppedAt[l.steps[st.next-1].Frames]++
		}
		fed += float64(st.fed)
		dist += float64(len(st.distinct))
	}
	if cs.Final > 0 {
		cs.MeanFramesFed = round3(fed / float64(cs.Final))
		cs.MeanFramesDistinct = round3(dist / float64(cs.Final))
	}
	return cs
}
