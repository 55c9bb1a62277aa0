package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/framesweep/framesweep/audit/score"
	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/internal/version"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// Options configure a sweep.
type Options struct {
	Grid     *sampler.Grid
	GridPath string
	Items    *Items
	Runtime  llm.Runtime // answers every pair; safe for concurrent use (llm.Runtime's contract)
	Spec     llm.Spec    // the runtime's spec, recorded
	Template string      // prompt template for items that name none ("" = generic)
	Out      string      // the RUN: a directory, or a blob URL (records as chunk objects: store.go)
	Resume   bool        // continue the sweep RUN holds
	Jobs     int         // videos in parallel (≥ 1)
	// Concurrency is how many answers are in flight at once (the runtime's own: an openai spec's
	// concurrency=N; 1 for in-process models).
	Concurrency int
	Cache       *cache.Store // content-addressed inputs, read and written; nil = the run's scratch store
	Limit       int          // the first Limit items only (0 = all)
	Shard       Shard        // this machine's videos
	Input       pipeline.Options
	// Generation settings of every request.
	MaxTokens   int
	Temperature float64
	Seed        int64
	Libraries   map[string]string // the linked library versions, for run.json
	Command     []string
	Log         *slog.Logger // progress and warnings (nil = discard)
	// Progress, when set, is told about every finished pair.
	Progress Progress
	// Cascade, when set, runs the grid's configs as an online confidence cascade (cascade.go).
	Cascade *Cascade
	// ChunkRecords and ChunkInterval: on an object store, a chunk of records is published every
	// ChunkRecords records or once its oldest record has waited ChunkInterval, and at the end
	// (0: DefaultChunkRecords, DefaultChunkInterval). A local RUN ignores them.
	ChunkRecords  int
	ChunkInterval time.Duration
}

// Progress follows a sweep: Start with the pairs to do, Pair after each.
type Progress interface {
	Start(total int)
	Pair(r *Record)
	Finish()
}

// Summary is a sweep's closing report (`framesweep sweep`'s JSON).
type Summary struct {
	Run            string  `json:"run"`
	Records        string  `json:"records"`
	Items          int     `json:"items"`
	Configs        int     `json:"configs"`
	Videos         int     `json:"videos"` // videos with items in this shard
	VideosOther    int     `json:"videos_other_shards,omitempty"`
	Pairs          int     `json:"pairs"`           // items × configs in this shard
	PairsRecorded  int     `json:"pairs_recorded"`  // already in RUN before this session
	PairsDone      int     `json:"pairs_done"`      // answered this session
	PairsFailed    int     `json:"pairs_failed"`    // error records written this session
	PairsRemaining int     `json:"pairs_remaining"` // not recorded (an interrupted session)
	TornBytes      int64   `json:"torn_bytes_cut"`  // an interrupted line cut on resume
	FramesDecoded  int     `json:"frames_decoded"`  // over all videos (= the unions: decoded once)
	FramesUnion    int     `json:"frames_union"`    // distinct frames the built inputs needed
	InputsBuilt    int     `json:"inputs_built"`    // objects decoded this session
	InputsCached   int     `json:"inputs_cached"`   // objects found in the store (decoded nothing)
	RuntimeSeconds float64 `json:"runtime_seconds"` // the runtime's own time, summed over pairs
	Seconds        float64 `json:"seconds"`
	Stopped        string  `json:"stopped,omitempty"` // a signal ended the session early
	// Cascade: an online cascade's outcome (pairs_* then count records, one per item and step asked).
	Cascade  *CascadeSummary `json:"cascade,omitempty"`
	PerVideo []VideoSummary  `json:"per_video"`
}

// VideoSummary is one video's part of a sweep session.
type VideoSummary struct {
	Video         string `json:"video"`
	SHA256        string `json:"sha256,omitempty"`
	Items         int    `json:"items"`
	PairsDone     int    `json:"pairs_done"`
	PairsFailed   int    `json:"pairs_failed"`
	FramesUnion   int    `json:"frames_union"`
	FramesDecoded int    `json:"frames_decoded"`
	InputsBuilt   int    `json:"inputs_built"`
	InputsCached  int    `json:"inputs_cached"`
	// FramesHeld: an online cascade's most source-size frames kept at once for later steps.
	FramesHeld int     `json:"frames_held,omitempty"`
	Seconds    float64 `json:"seconds"`
}

// ErrInterrupted is returned (with the summary) when a signal stopped the session: the RUN is
// consistent and `--resume` continues it.
var ErrInterrupted = errors.New("interrupted")

// Run performs the sweep. stop ends the session gracefully when closed: no new pair starts, the
// answers in flight finish and are recorded. ctx cancels everything at once (in-flight answers too).
// It returns the summary also when pairs failed (Summary.PairsFailed); the error is for the RUN itself
// (it cannot be written, it belongs to another sweep) or ErrInterrupted.
func Run(ctx context.Context, stop <-chan struct{}, o Options) (*Summary, error) {
	start := time.Now()
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Jobs < 1 {
		o.Jobs = 1
	}
	if o.Concurrency < 1 {
		o.Concurrency = 1
	}
	if err := o.Input.Check(); err != nil {
		return nil, err
	}
	var steps []*sampler.Config
	if o.Cascade != nil {
		var err error
		if steps, err = cascadeSteps(o.Grid, o.Cascade); err != nil {
			return nil, err
		}
	}
	if o.Template == "" {
		o.Template = llm.TemplateGeneric
	}
	rs, err := openRunStore(ctx, o.Out, true)
	if err != nil {
		return nil, err
	}
	defer rs.close()
	unlock, err := rs.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()

	cur := o.runInfo()
	ri, warnings, err := o.openRun(ctx, rs, cur)
	if err != nil {
		return nil, err
	}
	created := len(ri.Sessions) == 0
	sess := Session{Command: o.Command, Started: now(), Limit: o.Limit, Resumed: o.Resume && len(ri.Sessions) > 0, Warnings: warnings}
	for _, w := range warnings {
		o.Log.Warn("libraries differ from the run's first session", "what", w)
	}
	ri.Sessions = append(ri.Sessions, sess)
	if err := writeRunInfo(ctx, rs, ri, created); err != nil {
		return nil, err
	}

	recPath := rs.records()
	rf, done, cut, err := rs.openRecords(ctx, len(ri.Sessions)-1, chunking{o.ChunkRecords, o.ChunkInterval})
	if err != nil {
		return nil, err
	}
	defer rf.close()
	if cut > 0 {
		o.Log.Warn("cut a torn last record (an interrupted write)", "file", recPath, "bytes", cut)
	}

	store := o.Cache
	scratch := ""
	if store == nil {
		// Inputs are built into the run's own store and each video's objects are removed once its
		// pairs are answered; a crash leaves them to the next session, which clears the directory.
		if scratch, err = rs.scratchDir(); err != nil {
			return nil, err
		}
		if err := os.RemoveAll(scratch); err != nil {
			return nil, err
		}
		if store, err = cache.Open(ctx, scratch); err != nil {
			return nil, err
		}
		defer store.Close()
		defer os.RemoveAll(scratch)
	}

	s := &session{o: &o, rf: rf, done: done, store: store, scratch: scratch != "",
		sum:  &Summary{Run: o.Out, Records: recPath, Configs: len(o.Grid.Configs), TornBytes: cut, PerVideo: []VideoSummary{}},
		stop: stop, runtimeInfo: cur.Runtime, steps: steps, cstate: map[string]*itemState{}}
	if steps != nil {
		if s.cstate, err = readCascadeState(ctx, rs, steps); err != nil {
			return nil, err
		}
	}
	groups, err := s.groups(ctx)
	if err != nil {
		return nil, err
	}
	if steps != nil {
		// Every item's state exists before the videos run in parallel: the map is then only read
		// concurrently, and each item's state is touched by its own video's goroutine alone.
		for _, g := range groups {
			for _, it := range g.items {
				if s.cstate[it.ItemID] == nil {
					s.cstate[it.ItemID] = &itemState{distinct: map[int]bool{}}
				}
			}
		}
	}
	todo := 0
	for _, g := range groups {
		if steps != nil {
			for _, it := range g.items {
				if st := s.cstate[it.ItemID]; st == nil || !st.final && st.next < len(steps) {
					todo++ // an online cascade counts items, not records
				}
			}
			continue
		}
		todo += g.pending(s, nil)
	}
	if o.Progress != nil {
		o.Progress.Start(todo)
	}
	o.Log.Info("sweep", "run", o.Out, "items", s.sum.Items, "configs", s.sum.Configs, "videos", len(groups), "pairs", s.sum.Pairs, "recorded", s.sum.PairsRecorded, "to_do", todo)

	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(o.Jobs)
	results := make([]VideoSummary, len(groups))
	for i, g := range groups {
		if s.stopped() {
			break
		}
		eg.Go(func() error {
			run := s.video
			if steps != nil {
				run = s.cascadeVideo
			}
			vs, err := run(gctx, g)
			results[i] = vs
			return err
		})
	}
	werr := eg.Wait()
	if o.Progress != nil {
		o.Progress.Finish()
	}
	for _, vs := range results {
		if vs.Video != "" {
			s.sum.PerVideo = append(s.sum.PerVideo, vs)
			s.sum.FramesDecoded += vs.FramesDecoded
			s.sum.FramesUnion += vs.FramesUnion
			s.sum.InputsBuilt += vs.InputsBuilt
			s.sum.InputsCached += vs.InputsCached
		}
	}
	s.sum.PairsDone = int(s.answered.Load())
	s.sum.PairsFailed = int(s.failed.Load())
	s.sum.RuntimeSeconds = math.Round(s.latency()*1000) / 1000
	s.sum.PairsRemaining = s.sum.Pairs - s.sum.PairsRecorded - s.sum.PairsDone - s.sum.PairsFailed
	if steps != nil {
		s.cascadeSummary()
	}
	s.sum.Seconds = math.Round(time.Since(start).Seconds()*1000) / 1000
	if cerr := rf.close(); werr == nil {
		werr = cerr
	}
	last := &ri.Sessions[len(ri.Sessions)-1]
	last.Ended, last.Pairs, last.Failed = now(), s.sum.PairsDone, s.sum.PairsFailed
	if s.stopped() {
		s.sum.Stopped = "signal"
		last.Stopped = "signal"
	}
	if err := writeRunInfo(ctx, rs, ri, false); err != nil && werr == nil {
		werr = err
	}
	if werr != nil {
		return s.sum, werr
	}
	if s.stopped() && s.sum.PairsRemaining > 0 {
		return s.sum, fmt.Errorf("%w: %d pairs left; rerun with --resume to finish %s", ErrInterrupted, s.sum.PairsRemaining, o.Out)
	}
	return s.sum, nil
}

// lockRun takes an exclusive lock on RUN/.lock so two sweeps never append to one records file.
func lockRun(dir string) (func(), error) {
	path := filepath.Join(dir, ".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: another sweep is running on this directory (%v)", dir, err)
	}
	return func() { f.Close() }, nil
}

// runInfo is what this invocation would write to run.json.
func (o *Options) runInfo() *RunInfo {
	gd, ids := gridDigest(o.Grid)
	ri := &RunInfo{
		Format: RunFormat, Engine: version.Engine,
		Grid:     GridInfo{Path: o.GridPath, SHA256: gd, Configs: ids},
		Items:    ItemsInfo{Path: o.Items.Path, SHA256: o.Items.SHA256, Count: len(o.Items.Items)},
		Runtime:  RuntimeInfo{Spec: o.Spec.Raw, Engine: o.Spec.Engine, ModelSHA256: modelDigests(o.Spec)},
		Template: o.Template,
		Inputs: InputsInfo{Kernel: kernelOf(o.Input), Stream: o.Input.Stream, OnDamaged: damagedOf(o.Input),
			Autorot: !o.Input.NoAutorotate},
		Libraries: o.Libraries,
		Cascade:   o.Cascade,
	}
	if o.Cache != nil {
		ri.Inputs.Cache = o.Cache.Location()
	}
	if o.Shard.N > 1 {
		ri.Shard = o.Shard.String()
	}
	return ri
}

func kernelOf(p pipeline.Options) string {
	if p.Kernel == "" {
		return "pil-bicubic"
	}
	return p.Kernel
}

func damagedOf(p pipeline.Options) string {
	if p.OnDamaged == "" {
		return "fail"
	}
	return string(p.OnDamaged)
}

// modelDigests are the sha256 of every file a spec names (model=, mmproj=, …): the model is part of
// what a record means.
func modelDigests(sp llm.Spec) map[string]string {
	out := map[string]string{}
	keys := make([]string, 0, len(sp.Params))
	for k := range sp.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := sp.Params[k]
		if st, err := os.Stat(v); err == nil && st.Mode().IsRegular() {
			if d, err := cache.FileSHA256(v); err == nil {
				out[k] = d
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// openRun reads or creates run.json: a new RUN gets cur; an existing one must be the same sweep and
// needs --resume.
func (o *Options) openRun(ctx context.Context, rs runStore, cur *RunInfo) (*RunInfo, []string, error) {
	b, err := rs.readFile(ctx, runInfoFile)
	var prev *RunInfo
	if err == nil {
		prev, err = parseRunInfo(b, rs.where(runInfoFile))
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		srcs, serr := rs.sources(ctx)
		if serr != nil {
			return nil, nil, serr
		}
		for _, src := range srcs {
			if _, local := rs.(*dirRun); local && src == recordsName {
				if st, serr := os.Stat(rs.where(src)); serr == nil && st.Size() == 0 {
					continue // an empty records.jsonl holds nothing
				}
			}
			return nil, nil, fmt.Errorf("%s: records without run.json: not a sweep directory; give another --out", o.Out)
		}
		return cur, nil, nil
	case err != nil:
		return nil, nil, err
	case !o.Resume:
		return nil, nil, fmt.Errorf("%s already holds a sweep (run.json): pass --resume to continue it, or give another --out", o.Out)
	}
	if err := sameSweep(prev, cur); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", o.Out, err)
	}
	return prev, libraryWarnings(prev.Libraries, o.Libraries), nil
}

// session is one Run in progress.
type session struct {
	o           *Options
	rf          recordWriter
	done        map[pairKey]bool // recorded before this session (read-only during the run)
	store       *cache.Store
	scratch     bool
	sum         *Summary
	stop        <-chan struct{}
	runtimeInfo RuntimeInfo
	steps       []*sampler.Config     // online cascade: the ladder, lowest budget first
	cstate      map[string]*itemState // online cascade: where each item stands

	answered, failed atomic.Int64
	latMu            sync.Mutex
	latSum           float64
}

func (s *session) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

func (s *session) latency() float64 {
	s.latMu.Lock()
	defer s.latMu.Unlock()
	return s.latSum
}

// group is one video with the items on it.
type group struct {
	path  string
	sha   string // "" when the file cannot be read (its pairs get error records)
	err   error  // why it cannot be read
	items []*Item
}

// pending counts the group's pairs not yet recorded (of configs c, or all when nil).
func (g *group) pending(s *session, c *sampler.Config) int {
	n := 0
	for _, it := range g.items {
		for i := range s.o.Grid.Configs {
			cfg := &s.o.Grid.Configs[i]
			if c != nil && cfg.ID != c.ID {
				continue
			}
			if !s.done[pairKey{it.ItemID, cfg.ID}] {
				n++
			}
		}
	}
	return n
}

// groups selects the items (limit), groups them by video content and keeps this shard's videos.
func (s *session) groups(ctx context.Context) ([]*group, error) {
	items := s.o.Items.Items
	if s.o.Limit > 0 && s.o.Limit < len(items) {
		items = items[:s.o.Limit]
	}
	byPath := map[string]*group{}
	var order []*group
	for i := range items {
		it := &items[i]
		g := byPath[it.Video]
		if g == nil {
			g = &group{path: it.Video}
			byPath[it.Video] = g
			order = append(order, g)
		}
		g.items = append(g.items, it)
	}
	// Hash every video (the shard key and the records' video_sha256); two paths to one content are
	// one group, so the video is decoded once.
	bySHA := map[string]*group{}
	var out []*group
	for _, g := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, err := os.Stat(g.path)
		switch {
		case err != nil:
			g.err = err
		case !st.Mode().IsRegular():
			g.err = fmt.Errorf("%s: not a regular file", g.path)
		default:
			if g.sha, err = cache.FileSHA256(g.path); err != nil {
				g.err = err
			}
		}
		key := g.sha
		if key == "" { // unreadable: shard by the path, so exactly one shard reports it
			sum := sha256.Sum256([]byte(g.path))
			key = hex.EncodeToString(sum[:])
		}
		if !s.o.Shard.Owns(key) {
			s.sum.VideosOther++
			continue
		}
		if g.sha != "" {
			if prev := bySHA[g.sha]; prev != nil {
				prev.items = append(prev.items, g.items...)
				continue
			}
			bySHA[g.sha] = g
		}
		out = append(out, g)
	}
	for _, g := range out {
		s.sum.Items += len(g.items)
		for _, it := range g.items {
			for _, c := range s.o.Grid.Configs {
				s.sum.Pairs++
				if s.done[pairKey{it.ItemID, c.ID}] {
					s.sum.PairsRecorded++
				}
			}
		}
	}
	s.sum.Videos = len(out)
	return out, nil
}

// video runs every pending pair of one video: text-only configs straight away, visual configs from
// one decoding pass (or the store), each config's input fed as soon as it is written.
func (s *session) video(ctx context.Context, g *group) (vs VideoSummary, err error) {
	t0 := time.Now()
	vs = VideoSummary{Video: g.path, SHA256: g.sha, Items: len(g.items)}
	defer func() { vs.Seconds = math.Round(time.Since(t0).Seconds()*1000) / 1000 }()
	var visual []sampler.Config
	var text []*sampler.Config
	for i := range s.o.Grid.Configs {
		c := &s.o.Grid.Configs[i]
		if g.pending(s, c) == 0 {
			continue
		}
		if c.TextOnly {
			text = append(text, c)
		} else {
			visual = append(visual, *c)
		}
	}
	feed := newFeeder(ctx, s, g, &vs)
	for _, c := range text {
		feed.input(nil, nil, []*sampler.Config{c})
	}
	if len(visual) > 0 && !s.stopped() {
		if err := s.visual(ctx, g, visual, feed, &vs); err != nil {
			feed.close()
			return vs, err
		}
	}
	err = feed.close()
	return vs, err
}

// visual builds the inputs of the pending visual configs and hands each to the feeder.
func (s *session) visual(ctx context.Context, g *group, configs []sampler.Config, feed *feeder, vs *VideoSummary) error {
	fail := func(cfgs []*sampler.Config, v *pipeline.Video, err error) {
		for _, c := range cfgs {
			feed.failPairs(c, v, err)
		}
	}
	all := make([]*sampler.Config, len(configs))
	for i := range configs {
		all[i] = &configs[i]
	}
	if g.err != nil {
		fail(all, nil, g.err)
		return nil
	}
	pctx, cancel := s.passContext(ctx)
	defer cancel()
	v, src, err := pipeline.OpenVideo(pctx, pipeline.VideoRef{Path: g.path}, s.o.Input)
	if err != nil {
		fail(all, &v, err)
		return nil
	}
	defer src.Close()
	jobs, fails, err := pipeline.Plan(v, configs, s.o.Input)
	if err != nil {
		return err
	}
	for _, f := range fails {
		feed.failPairs(f.Config, &v, f.Err)
	}
	var build []*pipeline.Job
	for _, j := range jobs {
		_, _, err := s.store.Stat(ctx, j.Key)
		switch {
		case err == nil:
			vs.InputsCached++
			feed.input(&v, j, j.Configs)
		case errors.Is(err, cache.ErrNotFound), errors.Is(err, cache.ErrCorrupt):
			build = append(build, j)
		default:
			return err // the store cannot be read
		}
	}
	if len(build) == 0 {
		return nil
	}
	sink := &pipeline.StoreSink{Ctx: ctx, Store: s.store, Written: func(r *pipeline.Result, _ cache.Ref) error {
		feed.input(&v, r.Job, r.Job.Configs) // fed while the pass goes on
		return nil
	}}
	st, jerrs, err := pipeline.Run(pctx, v, src, build, sink)
	vs.FramesUnion, vs.FramesDecoded, vs.InputsBuilt = st.Union, st.Decoded, st.Completed
	for _, je := range jerrs {
		fail(je.Job.Configs, &v, je.Err)
	}
	var se *pipeline.SinkError
	switch {
	case errors.As(err, &se):
		return se // the store is broken: stop the sweep
	case err != nil && s.stopped():
		return nil // stopped: the unbuilt inputs are left to --resume
	case err != nil:
		for _, j := range build {
			if !feed.fed(j) {
				fail(j.Configs, &v, err)
			}
		}
	}
	return nil
}

// feeder answers one video's pairs: inputs arrive (text-only, from the store, or from the pass as
// they are written), are loaded one at a time, and their pairs go to Concurrency answer workers.
type feeder struct {
	ctx  context.Context
	s    *session
	g    *group
	vs   *VideoSummary
	mu   sync.Mutex
	seen map[string]bool // job keys handed to the feeder
	in   chan feedInput
	wg   sync.WaitGroup
	err  error
}

type feedInput struct {
	v       *pipeline.Video
	job     *pipeline.Job // nil: text-only
	configs []*sampler.Config
}

type task struct {
	item *Item
	cfg  *sampler.Config
	v    *pipeline.Video
	job  *pipeline.Job
	in   *pipeline.Input
	sha  string
}

func newFeeder(ctx context.Context, s *session, g *group, vs *VideoSummary) *feeder {
	f := &feeder{ctx: ctx, s: s, g: g, vs: vs, seen: map[string]bool{}, in: make(chan feedInput, 1024)}
	tasks := make(chan task, s.o.Concurrency)
	f.wg.Add(1)
	go func() { // the loader: one input in memory at a time, besides those being answered
		defer f.wg.Done()
		defer close(tasks)
		for fi := range f.in {
			f.load(fi, tasks)
		}
	}()
	for range s.o.Concurrency {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for t := range tasks {
				f.answer(t)
			}
		}()
	}
	return f
}

// input queues an input (nil job: text-only configs).
func (f *feeder) input(v *pipeline.Video, j *pipeline.Job, configs []*sampler.Config) {
	if j != nil {
		f.mu.Lock()
		f.seen[j.Key] = true
		f.mu.Unlock()
	}
	f.in <- feedInput{v: v, job: j, configs: configs}
}

func (f *feeder) fed(j *pipeline.Job) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[j.Key]
}

// close waits for every queued pair; it returns the first records-file error.
func (f *feeder) close() error {
	close(f.in)
	f.wg.Wait()
	if f.s.scratch {
		f.s.dropScratch(f.ctx, f.seenKeys())
	}
	return f.err
}

func (f *feeder) seenKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := make([]string, 0, len(f.seen))
	for k := range f.seen {
		keys = append(keys, k)
	}
	return keys
}

func (f *feeder) setErr(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

// load reads one input and queues its pending pairs.
func (f *feeder) load(fi feedInput, tasks chan<- task) {
	var in *pipeline.Input
	var sha string
	if fi.job != nil && f.hasPending(fi.configs) {
		var err error
		in, _, err = pipeline.LoadInput(f.ctx, f.s.store, fi.job.Key)
		if err == nil && in.Tensor.DType != cache.U8 {
			err = fmt.Errorf("input %s is %s, the runtimes take uint8 RGB", fi.job.Key, in.Tensor.DType)
		}
		if err != nil {
			for _, c := range fi.configs {
				f.failPairs(c, fi.v, err)
			}
			return
		}
		sum := sha256.Sum256(in.Tensor.Data)
		sha = hex.EncodeToString(sum[:])
	}
	for _, c := range fi.configs {
		for _, it := range f.g.items {
			if f.s.done[pairKey{it.ItemID, c.ID}] {
				continue
			}
			if f.s.stopped() {
				return
			}
			tasks <- task{item: it, cfg: c, v: fi.v, job: fi.job, in: in, sha: sha}
		}
	}
}

func (f *feeder) hasPending(configs []*sampler.Config) bool {
	for _, c := range configs {
		if f.g.pending(f.s, c) > 0 {
			return true
		}
	}
	return false
}

// failPairs records an error for every pending pair of config c on this video.
func (f *feeder) failPairs(c *sampler.Config, v *pipeline.Video, err error) {
	for _, it := range f.g.items {
		if f.s.done[pairKey{it.ItemID, c.ID}] {
			continue
		}
		r := f.s.baseRecord(it, c, v, nil)
		r.Status, r.Error = record.StatusError, pipeline.OneLine(err)
		f.record(r)
	}
}

func (f *feeder) record(r *Record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.s.write(r, f.g, f.vs); err != nil && f.err == nil {
		f.err = err
	}
}

// write appends r to the records and counts it in vs (the caller serialises calls for one vs).
func (s *session) write(r *Record, g *group, vs *VideoSummary) error {
	r.At = now()
	if r.VideoSHA256 == "" {
		r.VideoSHA256 = g.sha
	}
	if err := s.rf.write(r); err != nil {
		return err
	}
	if r.Status == record.StatusError {
		s.failed.Add(1)
		vs.PairsFailed++
	} else {
		s.answered.Add(1)
		vs.PairsDone++
	}
	if s.o.Progress != nil && (r.Cascade == nil || r.Cascade.Final) {
		s.o.Progress.Pair(r)
	}
	return nil
}

// answer asks the runtime one pair and records the answer (or why there is none).
func (f *feeder) answer(t task) { f.record(f.s.ask(f.ctx, t)) }

// ask asks the runtime one pair and returns its record (not yet written): the answer, or status
// error with the runtime's reason.
func (s *session) ask(ctx context.Context, t task) *Record {
	it := t.item
	r := s.baseRecord(it, t.cfg, t.v, t.job)
	req := &llm.Request{Question: it.Question, Options: it.Options, Subtitles: it.Subtitles,
		Template: it.Template, Temperature: s.o.Temperature, MaxTokens: s.o.MaxTokens, Seed: s.o.Seed}
	if req.Template == "" {
		req.Template = s.o.Template
	}
	if t.in != nil {
		req.Frames = t.in.Frames
		r.InputSHA256 = t.sha
		if d := t.in.Meta["damaged"]; d != "" && d != "[]" {
			_ = json.Unmarshal([]byte(d), &r.Damaged)
		}
	}
	if p, tpl, err := llm.Render(req); err == nil {
		b, _ := json.Marshal(p)
		sum := sha256.Sum256(b)
		r.PromptSHA256, r.Template = hex.EncodeToString(sum[:]), tpl.ID
	}
	resp, err := s.o.Runtime.Answer(ctx, req)
	if err != nil {
		r.Status, r.Error = record.StatusError, pipeline.OneLine(err)
		return r
	}
	r.Status = record.StatusOK
	r.Response, r.Prediction, r.Probs = resp.Text, resp.Choice, resp.Probs
	r.Template = resp.Template
	r.PromptTokens, r.CompletionTokens, r.RequestSHA256, r.ImageFormat = resp.PromptTokens, resp.CompletionTokens, resp.RequestSHA256, resp.ImageFormat
	lat := resp.LatencyS
	r.LatencyS = &lat
	s.latMu.Lock()
	s.latSum += lat
	s.latMu.Unlock()
	if it.MultipleChoice() {
		ok := strings.EqualFold(strings.TrimSpace(resp.Choice), strings.TrimSpace(it.Answer))
		r.Correct = &ok
		if len(resp.Probs) > 0 {
			best := 0.0
			for _, p := range resp.Probs {
				best = math.Max(best, p)
			}
			r.Confidence = &best
		}
	} else {
		sc := score.TokenF1(resp.Text, it.Answer)
		r.Score = &sc
		r.Prediction = resp.Text
	}
	return r
}

// baseRecord is the part of a record known before the answer.
func (s *session) baseRecord(it *Item, c *sampler.Config, v *pipeline.Video, j *pipeline.Job) *Record {
	r := &Record{ItemID: it.ItemID, Config: c.ID, Answer: it.Answer, Category: it.Category, Duration: it.Duration,
		Task: it.Task, Video: it.Video, Runtime: s.runtimeInfo.Spec, ModelSHA256: s.runtimeInfo.ModelSHA256,
		ConfigMeta: configMeta(c, s.o.Grid)}
	if v != nil {
		r.VideoSHA256 = v.SHA256
		si := v.Info.StreamIndex
		r.StreamIndex = &si
	}
	if j != nil {
		r.ConfigMeta.Indices = j.Plan.Indices
		r.TimestampsS = j.Plan.TimestampsS
		r.Geometry, r.Kernel, r.Images, r.InputKey = j.Geometry, j.Spec.Kernel, j.Images, j.Key
		r.Width, r.Height, r.FramesFed = j.Width, j.Height, j.Frames()
	}
	return r
}

// configMeta is a config's config_meta: what is the same on every record of the config (the audit
// requires that). frames is the budget (absent in fps mode, where it depends on the video); width
// and height are the fixed size, or for geometries that depend on the source the size a 1920×1080
// source gets at the budget (nominal: a cost for ordering configs; each record's own size is in its
// width/height fields).
func configMeta(c *sampler.Config, grid *sampler.Grid) *record.ConfigMeta {
	m := &record.ConfigMeta{Policy: c.Policy, Preset: c.Preset, Pipeline: c.Pipeline}
	tt := c.TextOnly
	m.TextOnly = &tt
	if c.TextOnly {
		zero := 0
		m.Frames = &zero
		m.Pipeline = ""
		return m
	}
	if c.Frames > 0 {
		n := c.Frames
		m.Frames = &n
	}
	if strings.HasPrefix(c.Policy, "random") {
		sd := int64(c.Seed)
		m.Seed = &sd
	}
	if g := c.Geometry(); g != nil && c.Frames > 0 {
		w, h := 1920, 1080
		if fx, ok := g.(geom.Fixed); ok {
			w, h = fx.W, fx.H
		}
		if l, err := g.Layout(w, h, c.Frames); err == nil {
			if iw, ih, images, err := l.ImageSize(); err == nil {
				iw2, ih2 := iw, ih*images // tiles count as pixels fed
				m.Width, m.Height = &iw2, &ih2
			}
		}
	}
	return m
}

// dropScratch removes a finished video's inputs from the run's scratch store.
func (s *session) dropScratch(ctx context.Context, keys []string) {
	for _, k := range keys {
		if err := s.store.Remove(ctx, k); err != nil {
			s.o.Log.Warn("scratch input not removed", "key", k, "err", err)
		}
	}
}

// passContext is ctx, also cancelled by a stop: a stop ends decoding (what is decoded and written is
// kept; the rest is left to --resume).
func (s *session) passContext(ctx context.Context) (context.Context, context.CancelFunc) {
	pctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-pctx.Done():
		}
	}()
	return pctx, cancel
}
