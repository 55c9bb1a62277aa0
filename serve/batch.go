package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/engine/procfd"
	"github.com/framesweep/framesweep/pipeline"
)

// Sharing. A request whose object is not at hand joins the open batch of its video (its passKey):
// the first request opens it and starts a timer of Window; requests for the same video that arrive
// before it fires add their jobs, and then one pipeline.Run builds every job from one decoding pass.
// A request whose content key is already being built (in an open or running batch) waits for that
// build instead of adding a job. A batch whose waiters have all left is cancelled.

// future is one job's outcome, shared by every request waiting for it.
type future struct {
	done chan struct{}
	obj  *object
	err  error
}

// batch is the jobs of one video that one pass will build.
type batch struct {
	key    passKey
	video  pipeline.Video
	file   *os.File  // the batch's own descriptor of the video (a duplicate of the first request's)
	once   sync.Once // closes file
	jobs   []*pipeline.Job
	futs   map[string]*future // by content key
	refs   int                // requests waiting on this batch
	timer  *time.Timer
	ctx    context.Context
	cancel context.CancelFunc
	state  int // batchOpen, batchRunning, batchDone
}

const (
	batchOpen = iota
	batchRunning
	batchDone
)

// building is an entry of Server.building: a content key being built and where.
type building struct {
	b *batch
	f *future
}

// buildKey names a build in progress: the content key and the damage policy (the key does not hold
// it, but a build under "fail" refuses what one under "keep" delivers).
type buildKey struct {
	Key       string
	OnDamaged decode.DamagePolicy
}

// build returns job's object from a decoding pass shared with concurrent requests for the same
// video; shared is true when another request had already started building the same key.
func (s *Server) build(ctx context.Context, k passKey, v pipeline.Video, job *pipeline.Job, file *os.File) (obj *object, shared bool, err error) {
	// A batch may outlive the request that opens it: it decodes its own duplicate of the descriptor.
	dup, err := procfd.Dup(file, k.Path)
	if err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	var b *batch
	var f *future
	bk := buildKey{job.Key, k.OnDamaged}
	if e, ok := s.building[bk]; ok {
		b, f, shared = e.b, e.f, true
	} else {
		b = s.open[k]
		if b == nil {
			b = &batch{key: k, video: v, file: dup, futs: map[string]*future{}}
			dup = nil
			b.ctx, b.cancel = context.WithCancel(s.ctx)
			s.open[k] = b
			b.timer = time.AfterFunc(s.window, func() { s.run(b) })
		}
		f = &future{done: make(chan struct{})}
		b.jobs = append(b.jobs, job)
		b.futs[job.Key] = f
		s.building[bk] = building{b, f}
		if len(b.jobs) >= s.cfg.MaxInflight && b.timer.Stop() {
			go s.run(b) // nobody else can join with a job: start now
		}
	}
	b.refs++
	s.mu.Unlock()
	if dup != nil {
		dup.Close() // the batch joined has its own
	}
	select {
	case <-f.done:
		s.leave(b)
		return f.obj, shared, f.err
	case <-ctx.Done():
		// The request keeps its slot until the build it waits for ends (at once when it was the last
		// to wait: the pass is cancelled), so the objects being built never outnumber the slots.
		s.leave(b)
		<-f.done
		return nil, shared, apiErr(http.StatusServiceUnavailable, CodeUnavailable, "request cancelled: %v", ctx.Err())
	}
}

// leave drops one waiter of b; when none is left before b is done, b is cancelled and forgotten so
// that later requests start afresh. A batch that has not started never will (run finds it done): its
// builds end now. A running batch whose every build is settled is left to end by itself: only the
// decoder's end is left, and cancelling it would kill a worker process that is about to answer (the
// pool would then start another).
func (s *Server) leave(b *batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b.refs--
	if b.refs > 0 || b.state == batchDone || b.state == batchRunning && len(b.futs) == 0 {
		return
	}
	if b.state == batchOpen {
		b.timer.Stop()
		b.state = batchDone
		for key, f := range b.futs {
			s.settleLocked(b, key, f, nil, apiErr(http.StatusServiceUnavailable, CodeUnavailable, "every request for this build left"))
		}
		b.closeFile()
	}
	b.cancel()
	s.forget(b)
}

// forget removes b from the open batches and its keys from the builds in progress (s.mu held).
func (s *Server) forget(b *batch) {
	if s.open[b.key] == b {
		delete(s.open, b.key)
	}
	for key, f := range b.futs {
		if bk := (buildKey{key, b.key.OnDamaged}); s.building[bk].f == f {
			delete(s.building, bk)
		}
	}
}

// run builds every job of b in one pass and settles their futures.
func (s *Server) run(b *batch) {
	s.mu.Lock()
	if s.open[b.key] == b {
		delete(s.open, b.key)
	}
	if b.state != batchOpen || b.refs == 0 {
		s.mu.Unlock()
		b.closeFile()
		return
	}
	b.state = batchRunning
	jobs := append([]*pipeline.Job(nil), b.jobs...)
	s.mu.Unlock()

	var fatal error
	defer func() {
		if p := recover(); p != nil {
			s.logf("panic in a decoding pass over %s: %v\n%s", b.video.Path, p, debug.Stack())
			fatal = apiErr(http.StatusInternalServerError, CodeInternal, "the decoding pass failed: %v", p)
		}
		s.mu.Lock()
		b.state = batchDone
		for key, f := range b.futs {
			s.settleLocked(b, key, f, nil, fatal)
		}
		s.forget(b)
		s.mu.Unlock()
		b.cancel()
		b.closeFile()
	}()
	src, err := s.videos.open(b.ctx, b.key, b.video, b.file)
	if err != nil {
		fatal = err
		return
	}
	defer src.Close()
	sink := &pipeline.MemorySink{Done: func(po *pipeline.Object) error {
		o := fromPipeline(po)
		s.stats.built.Add(1)
		s.put(b.ctx, o)
		s.settle(b, o.Key, o, nil)
		return nil
	}}
	s.stats.passes.Add(1)
	s.stats.running.Add(1)
	v := b.video
	v.File = b.file // a loader's reader opens the video again: through the batch's descriptor
	st, jerrs, err := pipeline.Run(b.ctx, v, src, jobs, sink)
	s.stats.running.Add(-1)
	s.stats.framesRequested.Add(int64(st.Requested))
	s.stats.framesDecoded.Add(int64(st.Decoded))
	s.stats.codecFrames.Add(int64(st.CodecFrames))
	for _, je := range jerrs {
		s.settle(b, je.Job.Key, nil, apiErr(http.StatusUnprocessableEntity, CodeBadVideo, "%v", je.Err))
	}
	if err != nil {
		var se *pipeline.SinkError
		switch {
		case errors.As(err, &se):
			fatal = apiErr(http.StatusInternalServerError, CodeInternal, "%v", err)
		case b.ctx.Err() != nil:
			fatal = apiErr(http.StatusServiceUnavailable, CodeUnavailable, "the decoding pass was cancelled")
		default:
			fatal = videoErr(err)
		}
	} else if len(jerrs) == 0 && st.Completed != len(jobs) {
		fatal = apiErr(http.StatusInternalServerError, CodeInternal, "the pass completed %d of %d jobs", st.Completed, len(jobs))
	}
}

// closeFile closes the batch's descriptor (once; the Source it opened holds its own).
func (b *batch) closeFile() { b.once.Do(func() { b.file.Close() }) }

// settle resolves key's future in b (once).
func (s *Server) settle(b *batch, key string, o *object, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := b.futs[key]; f != nil {
		s.settleLocked(b, key, f, o, err)
	}
}

func (s *Server) settleLocked(b *batch, key string, f *future, o *object, err error) {
	select {
	case <-f.done:
		return
	default:
	}
	if o == nil && err == nil {
		err = apiErr(http.StatusInternalServerError, CodeInternal, "the pass ended without building %s", key)
	}
	f.obj, f.err = o, err
	close(f.done)
	// The waiters hold f now; the batch lets go of it, so an object is garbage as soon as its own
	// requests are done with it, not when the whole pass ends.
	delete(b.futs, key)
	if bk := (buildKey{key, b.key.OnDamaged}); s.building[bk].f == f {
		delete(s.building, bk) // the LRU (or the store) has it now, or the next request retries
	}
}

// put keeps a freshly built object in the LRU and, with a store, writes it there as extract would.
func (s *Server) put(ctx context.Context, o *object) {
	s.objects.put(o.Key, o)
	if s.cfg.Store == nil {
		return
	}
	if _, err := s.cfg.Store.PutParts(ctx, o.Key, [][]byte{o.Header, o.Data, o.Tail}); err != nil {
		s.stats.storeErrors.Add(1)
		s.logf("cache: %v", fmt.Errorf("put %s: %w", o.Key, err))
		return
	}
	s.stats.storeWrites.Add(1)
}
