package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
)

// input is one config's input as the sweep holds it: the model input (Input; its Job nil for a
// text-only pair), or, while it is in the store only, its key.
type input struct {
	Input
	v      *pipeline.Video // the opened video (nil: text-only)
	key    string          // set while the input is in the store only (a cache hit, or over the memory budget)
	t0     time.Time       // the round's start
	buildS float64         // from the round's start until the input was ready
}

// memoryInput is a built input fed from the pass's memory (NewInput).
func memoryInput(o *pipeline.Object, v *pipeline.Video, t0 time.Time) (*input, error) {
	mi, err := NewInput(o)
	if err != nil {
		return nil, err
	}
	return &input{Input: *mi, v: v, t0: t0, buildS: time.Since(t0).Seconds()}, nil
}

// load reads an input that is in the store only.
func (in *input) load(ctx context.Context, store *cache.Store) error {
	pin, _, err := pipeline.LoadInput(ctx, store, in.key)
	if err != nil {
		return err
	}
	if err := in.setData(in.key, pin.Tensor); err != nil {
		return err
	}
	sum := sha256.Sum256(pin.Tensor.Data)
	in.SHA256 = hex.EncodeToString(sum[:])
	if d := pin.Meta["damaged"]; d != "" && d != "[]" {
		_ = json.Unmarshal([]byte(d), &in.Damaged) // the object's own metadata; a bad list only loses the note
	}
	in.buildS = time.Since(in.t0).Seconds()
	return nil
}

// feedSink is the sink of a video's decoding pass: it hands each finished input to done from the
// pass's memory, writing it to the --cache on the way (a tee: pipeline.StoreSink beside
// pipeline.MemorySink, the object never read back). Inputs beyond the memory budget go to the store
// only (the cache, or the scratch store), and done gets their key, to be loaded when their turn comes.
type feedSink struct {
	ctx    context.Context
	tee    *cache.Store // the --cache, or nil
	spill  *cache.Store // where inputs over the budget go
	budget int64        // bytes of tensors this pass may still hold for feeding
	done   func(j *pipeline.Job, in *input, err error)
	v      *pipeline.Video
	t0     time.Time
}

// Begin implements pipeline.Sink.
func (s *feedSink) Begin(j *pipeline.Job) (pipeline.JobWriter, error) {
	n := j.TensorBytes()
	if n > s.budget {
		return (&pipeline.StoreSink{Ctx: s.ctx, Store: s.spill, Written: func(r *pipeline.Result, _ cache.Ref) error {
			s.done(r.Job, &input{Input: Input{Job: r.Job}, v: s.v, key: r.Job.Key, t0: s.t0}, nil)
			return nil
		}}).Begin(j)
	}
	s.budget -= n
	mem, err := (&pipeline.MemorySink{Done: func(o *pipeline.Object) error {
		in, err := memoryInput(o, s.v, s.t0)
		s.done(o.Result.Job, in, err)
		return nil
	}}).Begin(j)
	if err != nil || s.tee == nil {
		return mem, err
	}
	st, err := (&pipeline.StoreSink{Ctx: s.ctx, Store: s.tee}).Begin(j)
	if err != nil {
		mem.Abort(err)
		return nil, err
	}
	return &teeWriter{store: st, mem: mem}, nil
}

// teeWriter writes a job's input to the store and to memory; the object is published before the
// input is fed.
type teeWriter struct{ store, mem pipeline.JobWriter }

func (w *teeWriter) Frame(pos int, data []byte) error {
	if err := w.store.Frame(pos, data); err != nil {
		return err
	}
	return w.mem.Frame(pos, data)
}

func (w *teeWriter) Done(r *pipeline.Result) error {
	if err := w.store.Done(r); err != nil {
		w.mem.Abort(err)
		return err
	}
	return w.mem.Done(r)
}

func (w *teeWriter) Abort(err error) {
	w.store.Abort(err)
	w.mem.Abort(err)
}

// feeder answers one video's pairs: inputs arrive with the pairs to ask on them (text-only at once,
// from the store, or from the pass as they are built), are made ready one at a time (an input in the
// store only is loaded then), and their pairs go to Concurrency answer workers. A stored input found
// corrupt or gone is not a pair's error: it is set aside for the driver to build again (rebuilds). A
// store or records failure is the session's: it stops the video (stopVideo) and is returned by close.
type feeder struct {
	ctx       context.Context
	answers   context.CancelFunc // ends the answers' context (session.answerContext)
	stopVideo func()             // cancels the video's decoding passes
	s         *session
	g         *group
	vs        *VideoSummary
	mu        sync.Mutex // serialises records and vs
	in        chan feedInput
	pending   sync.WaitGroup // inputs queued and pairs being answered
	loads     sync.WaitGroup // inputs queued that are to be read from the store
	workers   sync.WaitGroup
	fed       map[string]bool // job keys handed to the feeder
	spilled   []string        // keys written to the scratch store
	rebuild   []feedInput     // inputs whose stored object was corrupt or gone
	err       error
}

type feedInput struct {
	in   *input
	asks []ask
	load bool // in the store only: read before its pairs are asked
}

// task is one pair to answer.
type task struct {
	a   *ask
	it  *items.Item
	in  *input
	try time.Time // when the answer was asked
}

func newFeeder(ctx context.Context, stopVideo func(), s *session, g *group, vs *VideoSummary) *feeder {
	f := &feeder{ctx: ctx, stopVideo: stopVideo, s: s, g: g, vs: vs, fed: map[string]bool{}, in: make(chan feedInput, 1024)}
	actx, cancel := s.answerContext(ctx)
	f.answers = cancel
	tasks := make(chan task, s.o.Concurrency)
	f.workers.Add(1)
	go func() { // the loader: one stored input loaded at a time, besides those being answered
		defer f.workers.Done()
		defer close(tasks)
		for fi := range f.in {
			f.queue(fi, tasks)
			if fi.load {
				f.loads.Done()
			}
			f.pending.Done()
		}
	}()
	for range s.o.Concurrency {
		f.workers.Add(1)
		go func() {
			defer f.workers.Done()
			for t := range tasks {
				// A pair queued before a stop is not asked after it: left to --resume.
				if !f.halted() {
					t.try = time.Now()
					if r := f.s.ask(actx, t.it, t.a.cfg, t.in.v, t.in); r != nil {
						f.record(r, t)
					}
				}
				f.pending.Done()
			}
		}()
	}
	return f
}

// input queues an input and the pairs to ask on it.
func (f *feeder) input(in *input, asks []ask) {
	fi := feedInput{in: in, asks: asks, load: in.key != "" && in.Frames == nil && in.Tensor == nil}
	if in.Job != nil {
		f.mu.Lock()
		f.fed[in.Job.Key] = true
		if in.key != "" && f.s.scratch != "" {
			f.spilled = append(f.spilled, in.key)
		}
		f.mu.Unlock()
	}
	f.pending.Add(1)
	if fi.load {
		f.loads.Add(1)
	}
	f.in <- fi
}

func (f *feeder) wasFed(j *pipeline.Job) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fed[j.Key]
}

// unfeed forgets that j's input was handed over (it is to be built again).
func (f *feeder) unfeed(j *pipeline.Job) {
	f.mu.Lock()
	delete(f.fed, j.Key)
	f.mu.Unlock()
}

// queue readies one input and queues its pairs; after a stop or a failure of the session, pairs are
// left to --resume.
func (f *feeder) queue(fi feedInput, tasks chan<- task) {
	if f.halted() {
		return
	}
	if fi.load {
		if err := fi.in.load(f.ctx, f.s.store); err != nil {
			switch {
			case interrupted(f.ctx, err):
			case rebuildable(err):
				f.mu.Lock()
				f.rebuild = append(f.rebuild, fi)
				f.mu.Unlock()
			default:
				f.fatal(&StoreError{Err: err})
			}
			return
		}
	}
	for i := range fi.asks {
		for _, it := range fi.asks[i].items {
			if f.halted() {
				return
			}
			f.pending.Add(1)
			tasks <- task{a: &fi.asks[i], it: it, in: fi.in}
		}
	}
}

// halted: a stop, the session's end or a failure: no pair is to start.
func (f *feeder) halted() bool {
	return f.s.stopped() || f.ctx.Err() != nil || f.firstErr() != nil
}

// fatal keeps the video's first failure of the session (the store, the records) and stops the video.
func (f *feeder) fatal(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
	f.stopVideo()
}

// waitLoads blocks until every stored input queued so far has been read (or set aside to rebuild).
func (f *feeder) waitLoads() { f.loads.Wait() }

// takeRebuild returns the inputs set aside to build again, and forgets them.
func (f *feeder) takeRebuild() []feedInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.rebuild
	f.rebuild = nil
	return out
}

// wait blocks until every queued pair is recorded (or left to --resume after a stop).
func (f *feeder) wait() { f.pending.Wait() }

// close waits for every queued pair, stops the workers and removes the video's scratch inputs; it
// returns the first failure of the session (records, store).
func (f *feeder) close() error {
	close(f.in)
	f.workers.Wait()
	f.flushTokens()
	f.answers()
	f.s.dropScratch(f.ctx, f.spilled)
	return f.firstErr()
}

func (f *feeder) firstErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// fail records an error of the input for every pair of a: the video cannot be read (v nil when it
// could not be opened), a config cannot be planned for it, a frame did not decode. An error that only
// says the work was cancelled is no record: the pairs are left to --resume.
func (f *feeder) fail(a *ask, v *pipeline.Video, err error) {
	if interrupted(f.ctx, err) {
		f.s.noteInterrupted(err)
		return
	}
	for _, it := range a.items {
		f.record(f.s.errorRecord(it, a.cfg, v, err), task{a: a, it: it})
	}
}

// record writes r; an online cascade's step is added first (t.in nil: an error before any input).
func (f *feeder) record(r *record.Full, t task) {
	f.mu.Lock()
	if l := f.s.ladder; l != nil {
		var buildS, wallS float64
		if t.in != nil {
			buildS = t.in.buildS
			wallS = buildS + time.Since(t.try).Seconds()
		}
		l.annotate(r, t.a.step, t.in, buildS, wallS)
	}
	var err error
	for _, x := range f.s.tokens.settle(r) { // r, and the records that waited for it; or none yet
		if err = f.s.write(x, f.g, f.vs); err != nil {
			break
		}
	}
	f.mu.Unlock()
	if err != nil {
		f.fatal(err)
	}
}

// flushTokens writes the records still waiting for their item's base record (visualtokens.go): it
// was not answered this session.
func (f *feeder) flushTokens() {
	var err error
	f.mu.Lock()
	for _, r := range f.s.tokens.flush(f.g.items) {
		if err = f.s.write(r, f.g, f.vs); err != nil {
			break
		}
	}
	f.mu.Unlock()
	if err != nil {
		f.fatal(err)
	}
}
