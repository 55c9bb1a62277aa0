package sweep

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/pipeline"
)

// ask is a round's work on one config of a video: the items to ask at it (step: the cascade step).
type ask struct {
	cfg   *grid.Config
	items []*items.Item
	step  int
}

// video runs every pending pair of one video, in rounds: a fixed grid is one round (every config
// with pairs left); an online cascade is one round per budget, each asking the items still unsure
// after the round before. Whatever the rounds, the video is hashed once (groups), opened and planned
// once, and its frames decoded at most once: each round's inputs come from the store (--cache) or
// from one pass over the frames no earlier round decoded, fed from memory as they are built.
func (s *session) video(ctx context.Context, g *group) (vs VideoSummary, err error) {
	t0 := time.Now()
	vs = VideoSummary{Video: g.path, SHA256: g.sha, Items: len(g.items)}
	defer func() { vs.Seconds = round3(time.Since(t0).Seconds()) }()
	pctx, cancel := s.passContext(ctx)
	defer cancel()
	d := &driver{s: s, g: g, vs: &vs, ctx: pctx, feed: newFeeder(ctx, cancel, s, g, &vs), union: map[int]bool{}, rebuilt: map[string]bool{}}
	defer func() {
		if cerr := d.close(); err == nil {
			err = cerr
		}
	}()
	rounds := 1
	if s.ladder != nil {
		rounds = len(s.ladder.steps)
	}
	for k := range rounds {
		if s.stopped() {
			break
		}
		asks := d.round(k)
		if len(asks) == 0 {
			continue
		}
		if err := d.serve(asks, k); err != nil {
			return vs, err
		}
		if err := d.repair(k); err != nil {
			return vs, err
		}
		if s.ladder != nil { // who is asked next depends on these answers
			d.feed.wait()
			if err := d.feed.firstErr(); err != nil {
				return vs, err
			}
		}
	}
	return vs, nil
}

// driver is one video in progress.
type driver struct {
	s    *session
	g    *group
	vs   *VideoSummary
	ctx  context.Context // the decoding passes' context: a stop cancels it
	feed *feeder
	// The video, opened and planned for every config it may need on the first visual round.
	opened  bool
	openErr error
	v       pipeline.Video
	src     *frameCache
	jobOf   map[string]*pipeline.Job // config id → its job
	failOf  map[string]error         // config id → why it cannot be planned for this video
	union   map[int]bool             // frames the inputs built here needed
	rebuilt map[string]bool          // job keys built again after their stored object was unreadable
}

// round is round k's asks.
func (d *driver) round(k int) []ask {
	if l := d.s.ladder; l != nil {
		return l.round(d.g.items, k)
	}
	var out []ask
	for i := range d.s.o.Grid.Configs {
		c := &d.s.o.Grid.Configs[i]
		if its := d.g.pendingItems(d.s, c); len(its) > 0 {
			out = append(out, ask{cfg: c, items: its})
		}
	}
	return out
}

// planned are the configs to plan when the video is opened: a cascade's every step (a later round's
// frames are kept from an earlier one), else the configs with pairs left.
func (d *driver) planned() []grid.Config {
	var out []grid.Config
	if l := d.s.ladder; l != nil {
		for _, c := range l.steps {
			out = append(out, *c)
		}
		return out
	}
	for _, a := range d.round(0) {
		if !a.cfg.TextOnly {
			out = append(out, *a.cfg)
		}
	}
	return out
}

// open opens and plans the video once, with the digest groups took (the video is not hashed
// again). A video that cannot be opened is d.openErr: its pairs get error records. The error returned
// is the sweep's: the engine refuses the options.
func (d *driver) open() error {
	if d.opened {
		return nil
	}
	d.opened = true
	if d.g.err != nil {
		d.openErr = d.g.err
		return nil
	}
	v, src, err := pipeline.OpenVideo(d.ctx, pipeline.VideoRef{Path: d.g.path, SHA256: d.g.sha}, d.s.o.Input)
	d.v = v
	if err != nil {
		d.openErr = err
		return nil
	}
	d.src = newFrameCache(src)
	jobs, fails, err := pipeline.PlanJobs(v, d.planned(), d.s.o.Input)
	if err != nil {
		return err
	}
	d.jobOf, d.failOf = map[string]*pipeline.Job{}, map[string]error{}
	for _, j := range jobs {
		for _, c := range j.Configs {
			d.jobOf[c.ID] = j
		}
	}
	for _, f := range fails {
		d.failOf[f.Config.ID] = f.Err
	}
	return nil
}

// video is the video as records name it: nil when the file cannot be read at all, else what
// OpenVideo returned (its digest, and its stream once opened).
func (d *driver) video() *pipeline.Video {
	if d.g.err != nil {
		return nil
	}
	return &d.v
}

// serve feeds round k's asks: text-only at once, visual ones from the store or from one pass.
func (d *driver) serve(asks []ask, k int) error {
	t0 := time.Now()
	var visual []ask
	for _, a := range asks {
		if a.cfg.TextOnly {
			d.feed.input(&input{t0: t0}, []ask{a})
		} else {
			visual = append(visual, a)
		}
	}
	if len(visual) == 0 || d.s.stopped() {
		return nil
	}
	if err := d.open(); err != nil {
		return err
	}
	if d.openErr != nil {
		for i := range visual {
			d.feed.fail(&visual[i], d.video(), d.openErr)
		}
		return nil
	}
	byJob := map[*pipeline.Job][]ask{}
	var order []*pipeline.Job
	for i, a := range visual {
		if why := d.failOf[a.cfg.ID]; why != nil {
			d.feed.fail(&visual[i], &d.v, why)
			continue
		}
		j := d.jobOf[a.cfg.ID]
		if byJob[j] == nil {
			order = append(order, j)
		}
		byJob[j] = append(byJob[j], a)
	}
	build, err := d.fromStore(order, byJob, t0)
	if err != nil || len(build) == 0 {
		return err
	}
	return d.build(build, byJob, k, t0)
}

// fromStore feeds the jobs whose input the --cache holds and returns the others, to build.
func (d *driver) fromStore(jobs []*pipeline.Job, byJob map[*pipeline.Job][]ask, t0 time.Time) ([]*pipeline.Job, error) {
	if d.s.o.Cache == nil {
		return jobs, nil
	}
	var build []*pipeline.Job
	for _, j := range jobs {
		_, _, err := d.s.store.Stat(d.ctx, j.Key)
		switch {
		case err == nil:
			d.vs.InputsCached++
			d.feed.input(&input{Input: Input{Job: j}, v: &d.v, key: j.Key, t0: t0}, byJob[j])
		case errors.Is(err, cache.ErrNotFound), errors.Is(err, cache.ErrCorrupt):
			build = append(build, j)
		case interrupted(d.ctx, err):
			return nil, nil // stopped: left to --resume
		default:
			return nil, &StoreError{Err: err} // the store cannot be read: stop the sweep
		}
	}
	return build, nil
}

// build decodes the frames the jobs need (those no earlier round kept) in one pass and feeds each
// input as soon as it is built, while the pass goes on.
func (d *driver) build(jobs []*pipeline.Job, byJob map[*pipeline.Job][]ask, k int, t0 time.Time) error {
	d.src.retain(d.wanted(k)) // what earlier rounds kept and this round or a later one uses
	d.src.keep = d.wanted(k + 1)
	defer d.src.retain(d.src.keep)
	sink := &feedSink{ctx: d.ctx, tee: d.s.o.Cache, spill: d.s.store, budget: d.s.o.InputMemory, v: &d.v, t0: t0,
		done: func(j *pipeline.Job, in *input, err error) {
			if err != nil {
				for i := range byJob[j] {
					d.feed.fail(&byJob[j][i], &d.v, err)
				}
				return
			}
			d.feed.input(in, byJob[j])
		}}
	st, jerrs, err := pipeline.Run(d.ctx, d.v, d.src, jobs, sink)
	d.vs.FramesDecoded += st.Decoded
	d.vs.InputsBuilt += st.Completed
	for _, j := range jobs {
		for _, x := range j.Selection.Indices {
			d.union[x] = true
		}
	}
	d.vs.FramesUnion = len(d.union)
	d.vs.FramesHeld = max(d.vs.FramesHeld, d.src.peak)
	for _, je := range jerrs {
		for i := range byJob[je.Job] {
			d.feed.fail(&byJob[je.Job][i], &d.v, je.Err)
		}
	}
	var se *pipeline.SinkError
	switch {
	case errors.As(err, &se):
		return storeFailure(se) // the store is broken (a full disk): stop the sweep, record nothing
	case err != nil && (d.s.stopped() || interrupted(d.ctx, err)):
		return nil // stopped: the unbuilt inputs are left to --resume
	case err != nil:
		for _, j := range jobs {
			if !d.feed.wasFed(j) {
				for i := range byJob[j] {
					d.feed.fail(&byJob[j][i], &d.v, err)
				}
			}
		}
	}
	return nil
}

// repair builds again, in one more pass, the inputs of round k whose stored object turned out corrupt
// or gone when the feeder read it (a bit flip in a --cache object, a scratch file removed): as serve
// does, the object is rebuilt rather than any pair failed. An input found unreadable again after its
// rebuild is the store failing (*StoreError).
func (d *driver) repair(k int) error {
	for {
		d.feed.waitLoads()
		redo := d.feed.takeRebuild()
		if len(redo) == 0 || d.s.stopped() || d.ctx.Err() != nil {
			return nil
		}
		byJob := map[*pipeline.Job][]ask{}
		var jobs []*pipeline.Job
		for _, fi := range redo {
			j := fi.in.Job
			if d.rebuilt[j.Key] {
				return &StoreError{Err: fmt.Errorf("input %s: its object is unreadable again after it was built again", j.Key)}
			}
			d.rebuilt[j.Key] = true
			d.feed.unfeed(j)
			if byJob[j] == nil {
				jobs = append(jobs, j)
			}
			byJob[j] = append(byJob[j], fi.asks...)
			d.vs.InputsRebuilt++
			d.s.o.Log.Warn("stored input unreadable: building it again", "video", d.g.path, "input", j.Key)
		}
		if err := d.build(jobs, byJob, k, time.Now()); err != nil {
			return err
		}
	}
}

// wanted are the frames round k or a later one may ask for: those of the cascade's steps from k on
// (none for a fixed grid, whose one round passes every frame straight through).
func (d *driver) wanted(k int) map[int]bool {
	want := map[int]bool{}
	l := d.s.ladder
	if l == nil || k >= len(l.steps) {
		return want
	}
	for _, c := range l.steps[k:] {
		if j := d.jobOf[c.ID]; j != nil {
			for _, x := range j.Selection.Indices {
				want[x] = true
			}
		}
	}
	return want
}

// close waits for the video's answers and closes its source.
func (d *driver) close() error {
	err := d.feed.close()
	if d.src != nil {
		d.src.Close()
	}
	return err
}
