package sweep

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/sampler"
)

// Cascade is an online confidence cascade (METRICS.md "Confidence cascade", run live): each item is
// asked at the lowest budget and escalates to the next while its confidence (the largest option
// probability) is below Threshold, stopping at the top budget. Steps are the grid's configs at those
// budgets, lowest first.
type Cascade struct {
	Budgets   []int   `json:"budgets"`
	Threshold float64 `json:"threshold"`
	// From names where the threshold was chosen (a previous full RUN), for run.json.
	From string `json:"threshold_from,omitempty"`
}

// CascadeStep is the cascade part of an online run's record.
type CascadeStep struct {
	Threshold float64 `json:"threshold"`
	Budgets   []int   `json:"budgets"`
	Step      int     `json:"step"`  // 1-based position of this record's budget in the ladder
	Final     bool    `json:"final"` // the item's answer: confident enough, the top budget, or an error
	// StoppedAt is the budget (frames) the item stopped at, on its final record.
	StoppedAt int `json:"stopped_at,omitempty"`
	// FramesFed is the frames fed to the item over every step so far; FramesDistinct the distinct
	// frames of the index sets tried so far (what decoding them once costs).
	FramesFed      int `json:"frames_fed_total"`
	FramesDistinct int `json:"frames_distinct"`
	// StepBuildS is the wall-clock of building this step's input for the video (decoding the frames
	// not decoded before, resizing), shared by every item asked at the step; StepWallS is this item's
	// wall-clock at the step: the build plus its answer.
	StepBuildS float64 `json:"step_build_s"`
	StepWallS  float64 `json:"step_wall_s"`
}

// cascadeSteps returns the grid's configs of the cascade, lowest budget first; the grid must hold
// exactly one config per budget of one family (policy or preset, resolution, pipeline, seed) and no
// other configs, so there is no question which chain is escalated.
func cascadeSteps(g *sampler.Grid, c *Cascade) ([]*sampler.Config, error) {
	if len(c.Budgets) < 2 {
		return nil, fmt.Errorf("--cascade needs at least two budgets, got %v", c.Budgets)
	}
	if !(c.Threshold >= 0 && c.Threshold <= 1) {
		return nil, fmt.Errorf("--threshold %v is not a probability in [0, 1]", c.Threshold)
	}
	for i := 1; i < len(c.Budgets); i++ {
		if c.Budgets[i] <= c.Budgets[i-1] {
			return nil, fmt.Errorf("--cascade budgets must increase: %v", c.Budgets)
		}
	}
	byFrames := map[int]*sampler.Config{}
	family := ""
	for i := range g.Configs {
		cfg := &g.Configs[i]
		if cfg.TextOnly || cfg.Frames == 0 {
			return nil, fmt.Errorf("--cascade: the grid's config %s is not a frame budget (run text-only and fps configs in a sweep of their own)", cfg.ID)
		}
		fam := fmt.Sprintf("%s%s|%s|%s|%d", cfg.Policy, cfg.Preset, cfg.Resolution, cfg.Pipeline, cfg.Seed)
		if family != "" && fam != family {
			return nil, fmt.Errorf("--cascade: the grid holds more than one chain (%s and %s differ beyond the budget); give it one policy, resolution, pipeline and seed", g.Configs[0].ID, cfg.ID)
		}
		family = fam
		byFrames[cfg.Frames] = cfg
	}
	var steps []*sampler.Config
	for _, b := range c.Budgets {
		cfg := byFrames[b]
		if cfg == nil {
			return nil, fmt.Errorf("--cascade: budget %d is not one of the grid's frames", b)
		}
		steps = append(steps, cfg)
	}
	if len(steps) != len(g.Configs) {
		return nil, fmt.Errorf("--cascade %v: the grid has %d configs; list exactly the cascade's budgets in its frames", c.Budgets, len(g.Configs))
	}
	return steps, nil
}

// itemState is where an item stands in the cascade.
type itemState struct {
	next     int // index of the next step to ask
	final    bool
	fed      int
	distinct map[int]bool
}

// readCascadeState rebuilds each item's position from an online run's records (a resume): every
// records source of the RUN (the local file, or an object store's chunks), already validated and
// repaired by openRecords.
func readCascadeState(ctx context.Context, rs runStore, steps []*sampler.Config) (map[string]*itemState, error) {
	stepOf := map[string]int{}
	for i, c := range steps {
		stepOf[c.ID] = i
	}
	st := map[string]*itemState{}
	names, err := rs.sources(ctx)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		rc, err := rs.open(ctx, name)
		if err != nil {
			return nil, err
		}
		err = scanCascade(rc, stepOf, st)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rs.where(name), err)
		}
	}
	return st, nil
}

func scanCascade(r io.Reader, stepOf map[string]int, st map[string]*itemState) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue // the torn tail openRecords cut; whole lines were validated there
		}
		k, ok := stepOf[r.Config]
		if !ok {
			continue
		}
		s := st[r.ItemID]
		if s == nil {
			s = &itemState{distinct: map[int]bool{}}
			st[r.ItemID] = s
		}
		if k+1 > s.next {
			s.next = k + 1
		}
		if r.Cascade != nil {
			s.final = s.final || r.Cascade.Final
			s.fed = max(s.fed, r.Cascade.FramesFed)
		}
		if r.ConfigMeta != nil {
			for _, x := range r.ConfigMeta.Indices {
				s.distinct[x] = true
			}
		}
	}
	return sc.Err()
}

// frameCache is a pipeline.Source that keeps decoded frames for the cascade's later steps: a Read
// decodes only the frames it does not hold (one forward pass over them) and serves the rest from
// memory, in index order. keep decides which decoded frames stay; drop releases the rest.
type frameCache struct {
	src     pipeline.Source
	frames  map[int]*decode.Frame
	decoded int // frames decoded and converted by the underlying source, over every Read
	peak    int // most frames held at once
}

func (c *frameCache) Info() decode.Info { return c.src.Info() }
func (c *frameCache) Close() error      { return c.src.Close() }

func (c *frameCache) Read(indices []int, fn func(*decode.Frame) error) (decode.Stats, error) {
	var missing []int
	for _, x := range indices {
		if _, ok := c.frames[x]; !ok && !slices.Contains(missing, x) {
			missing = append(missing, x)
		}
	}
	var st decode.Stats
	var err error
	if len(missing) > 0 {
		st, err = c.src.Read(missing, func(f *decode.Frame) error {
			cp := *f
			cp.Image = *f.Image.Clone() // the decoder's frame is borrowed
			c.frames[f.Index] = &cp
			return nil
		})
		c.decoded += st.Converted
		c.peak = max(c.peak, len(c.frames))
	}
	served := append([]int(nil), indices...)
	sort.Ints(served)
	served = slices.Compact(served)
	for _, x := range served {
		if f, ok := c.frames[x]; ok {
			if ferr := fn(f); ferr != nil {
				return st, ferr
			}
		}
	}
	// The pass's stats: what this Read delivered; Converted stays what was decoded now.
	return st, err
}

// retain keeps only the frames in want.
func (c *frameCache) retain(want map[int]bool) {
	for x := range c.frames {
		if !want[x] {
			delete(c.frames, x)
		}
	}
}

// cascadeVideo runs the online cascade over one video's items: the first step for every item, then
// each later step for the items still unsure, decoding only frames no earlier step decoded.
func (s *session) cascadeVideo(ctx context.Context, g *group) (vs VideoSummary, err error) {
	t0 := time.Now()
	vs = VideoSummary{Video: g.path, SHA256: g.sha, Items: len(g.items)}
	defer func() { vs.Seconds = math.Round(time.Since(t0).Seconds()*1000) / 1000 }()
	steps := s.steps
	var active []*Item
	for _, it := range g.items {
		if st := s.cstate[it.ItemID]; !st.final && st.next < len(steps) {
			active = append(active, it)
		}
	}
	if len(active) == 0 {
		return vs, nil
	}
	var mu sync.Mutex // serialises writes and vs
	write := func(r *Record) error {
		mu.Lock()
		defer mu.Unlock()
		return s.write(r, g, &vs)
	}
	state := func(it *Item) *itemState { return s.cstate[it.ItemID] } // made in Run, before the videos
	failFrom := func(items []*Item, k int, v *pipeline.Video, why error) error {
		for _, it := range items {
			st := state(it)
			r := s.baseRecord(it, steps[k], v, nil)
			r.Status, r.Error = record.StatusError, pipeline.OneLine(why)
			r.Cascade = &CascadeStep{Threshold: s.o.Cascade.Threshold, Budgets: s.o.Cascade.Budgets, Step: k + 1, Final: true,
				StoppedAt: steps[k].Frames, FramesFed: st.fed, FramesDistinct: len(st.distinct)}
			st.final = true
			if err := write(r); err != nil {
				return err
			}
		}
		return nil
	}
	if g.err != nil {
		return vs, failFrom(active, state(active[0]).next, nil, g.err)
	}
	pctx, cancel := s.passContext(ctx)
	defer cancel()
	v, src, err := pipeline.OpenVideo(pctx, pipeline.VideoRef{Path: g.path}, s.o.Input)
	if err != nil {
		return vs, failFrom(active, state(active[0]).next, &v, err)
	}
	cfgs := make([]sampler.Config, len(steps))
	for i, c := range steps {
		cfgs[i] = *c
	}
	jobs, fails, err := pipeline.Plan(v, cfgs, s.o.Input)
	if err != nil {
		src.Close()
		return vs, err
	}
	jobOf := map[string]*pipeline.Job{}
	for _, j := range jobs {
		for _, c := range j.Configs {
			jobOf[c.ID] = j
		}
	}
	failOf := map[string]error{}
	for _, f := range fails {
		failOf[f.Config.ID] = f.Err
	}
	fc := &frameCache{src: src, frames: map[int]*decode.Frame{}}
	builtUnion := map[int]bool{} // frames the inputs built here needed: what one pass would decode
	defer fc.Close()
	defer func() {
		vs.FramesDecoded += fc.decoded
		vs.FramesHeld = fc.peak
	}()
	for k := range steps {
		if s.stopped() {
			return vs, nil
		}
		var askers []*Item
		for _, it := range active {
			if st := state(it); !st.final && st.next == k {
				askers = append(askers, it)
			}
		}
		if len(askers) == 0 {
			continue
		}
		cfg := steps[k]
		if why := failOf[cfg.ID]; why != nil {
			if err := failFrom(askers, k, &v, why); err != nil {
				return vs, err
			}
			continue
		}
		j := jobOf[cfg.ID]
		tb := time.Now()
		in, built, berr := s.stepInput(pctx, v, fc, j, &vs)
		build := time.Since(tb).Seconds()
		if berr != nil {
			if s.stopped() {
				return vs, nil
			}
			if err := failFrom(askers, k, &v, berr); err != nil {
				return vs, err
			}
			continue
		}
		if built {
			vs.InputsBuilt++
			for _, x := range j.Plan.Indices {
				builtUnion[x] = true
			}
			vs.FramesUnion = len(builtUnion)
		} else {
			vs.InputsCached++
		}
		// Keep only the frames a later step can still use.
		want := map[int]bool{}
		for _, later := range jobs {
			if laterStep(steps, later, k) {
				for _, x := range later.Plan.Indices {
					want[x] = true
				}
			}
		}
		fc.retain(want)
		sum := sha256.Sum256(in.Tensor.Data)
		sha := hex.EncodeToString(sum[:])
		// The step's askers, Concurrency at a time.
		sem := make(chan struct{}, s.o.Concurrency)
		var wg sync.WaitGroup
		var werr error
		var werrMu sync.Mutex
		for _, it := range askers {
			if s.stopped() {
				break
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				ta := time.Now()
				r := s.ask(pctx, task{item: it, cfg: cfg, v: &v, job: j, in: in, sha: sha})
				st := state(it)
				mu.Lock()
				st.fed += j.Frames()
				for _, x := range j.Plan.Indices {
					st.distinct[x] = true
				}
				conf := 0.0
				if r.Confidence != nil {
					conf = *r.Confidence
				}
				final := r.Status == record.StatusError || conf >= s.o.Cascade.Threshold || k == len(steps)-1
				r.Cascade = &CascadeStep{Threshold: s.o.Cascade.Threshold, Budgets: s.o.Cascade.Budgets, Step: k + 1, Final: final,
					FramesFed: st.fed, FramesDistinct: len(st.distinct), StepBuildS: round3(build), StepWallS: round3(build + time.Since(ta).Seconds())}
				if final {
					r.Cascade.StoppedAt = cfg.Frames
				}
				st.final, st.next = final, k+1
				mu.Unlock()
				if err := write(r); err != nil {
					werrMu.Lock()
					werr = errors.Join(werr, err)
					werrMu.Unlock()
				}
			}()
		}
		wg.Wait()
		if werr != nil {
			return vs, werr
		}
	}
	return vs, nil
}

// laterStep reports whether job j serves a step after k.
func laterStep(steps []*sampler.Config, j *pipeline.Job, k int) bool {
	for i := k + 1; i < len(steps); i++ {
		for _, c := range j.Configs {
			if c.ID == steps[i].ID {
				return true
			}
		}
	}
	return false
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// stepInput is one step's input: from the store when it holds it, else built from the frame cache
// (decoding only what it lacks) and, with a store, written there.
func (s *session) stepInput(ctx context.Context, v pipeline.Video, fc *frameCache, j *pipeline.Job, vs *VideoSummary) (*pipeline.Input, bool, error) {
	if s.o.Cache != nil {
		if _, _, err := s.store.Stat(ctx, j.Key); err == nil {
			in, _, err := pipeline.LoadInput(ctx, s.store, j.Key)
			return in, false, err
		}
	}
	var obj *pipeline.Object
	_, jerrs, err := pipeline.Run(ctx, v, fc, []*pipeline.Job{j}, &pipeline.MemorySink{Done: func(o *pipeline.Object) error {
		obj = o
		return nil
	}})
	switch {
	case err != nil:
		return nil, false, err
	case len(jerrs) > 0:
		return nil, false, jerrs[0].Err
	case obj == nil:
		return nil, false, fmt.Errorf("%s: config %s: no input built", v.Path, j.Config.ID)
	}
	if s.o.Cache != nil {
		if _, err := s.store.Put(ctx, j.Key, obj.Bytes()); err != nil {
			return nil, false, &pipeline.SinkError{Err: err}
		}
	}
	in, err := obj.Input()
	if err == nil && in.Tensor.DType != cache.U8 {
		err = fmt.Errorf("input %s is %s, the runtimes take uint8 RGB", j.Key, in.Tensor.DType)
	}
	return in, true, err
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

func (s *session) cascadeSummary() {
	cs := &CascadeSummary{Budgets: s.o.Cascade.Budgets, Threshold: s.o.Cascade.Threshold, From: s.o.Cascade.From, StoppedAt: map[int]int{}}
	var fed, dist float64
	for _, vsum := range s.sum.PerVideo {
		cs.FramesHeldPeak = max(cs.FramesHeldPeak, vsum.FramesHeld)
	}
	items := s.sum.Items
	cs.Items = items
	for _, st := range s.cstate {
		if !st.final {
			continue
		}
		cs.Final++
		if st.next >= 1 && st.next <= len(s.steps) {
			cs.StoppedAt[s.steps[st.next-1].Frames]++
		}
		fed += float64(st.fed)
		dist += float64(len(st.distinct))
	}
	if cs.Final > 0 {
		cs.MeanFramesFed = round3(fed / float64(cs.Final))
		cs.MeanFramesDistinct = round3(dist / float64(cs.Final))
	}
	s.sum.Cascade = cs
	s.sum.PairsRemaining = items - cs.Final
}
