package pipeline

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
)

// Source is an opened video that decodes frames in index order: *decode.Video in process, or
// supervised worker processes. OpenVideo and OpenSource make them (source.go); a caller may wrap one
// (the sweep's cascade keeps frames, `frames` keeps the decoder's report).
type Source interface {
	Info() decode.Info
	Read(indices []int, fn func(*decode.Frame) error) (decode.Stats, error)
	Close() error
}

// Sink receives the jobs' inputs as the pass produces them.
type Sink interface {
	// Begin is called for every job before the pass starts.
	Begin(j *Job) (JobWriter, error)
}

// JobWriter receives one job's frames tensor. Frame is called once per plan position, in plan
// order, never concurrently for one job; data (FrameBytes() bytes in the job's dtype) is valid only
// during the call. Done follows the last Frame, as soon as it is written: the input is complete.
// Abort replaces Done when the job cannot complete (a frame failed to decode, the pass stopped); it
// must release what Begin took. An error from Frame or Done stops the whole pass (a broken store).
type JobWriter interface {
	Frame(pos int, data []byte) error
	Done(r *Result) error
	Abort(err error)
}

// Result is what a pass observed for one finished job, beside its tensor: what the stored object's
// header records.
type Result struct {
	Video Video
	Job   *Job
	PTS   []int64    // per plan position, stream time base
	PSNR  []*float64 // cached pipeline: per position, cached vs raw at source size in dB (nil = identical)
	// Damaged lists the job's frame indices the decoder concealed (ascending; only with
	// decode.DamagedKeep, else such a job fails).
	Damaged []int
}

// JobError is a job the pass could not complete, with the cause (the frames that failed).
type JobError struct {
	Job *Job
	Err error
}

func (e JobError) Error() string { return e.Err.Error() }

// Stats report one pass.
type Stats struct {
	Requested   int `json:"frames_requested"` // plan positions over all jobs
	Union       int `json:"frames_union"`     // distinct frames the jobs need
	Decoded     int `json:"frames_decoded"`   // frames decoded and converted to RGB (= Union when decoding once)
	CodecFrames int `json:"codec_frames"`     // pictures the codec output, needed or not (GOP warm-up)
	Seeks       int `json:"seeks"`
	// PacketsSent are the packets the decoders were sent; PacketsMin the reference-chain floor any
	// decoder needs for the union (decode.Stats.MinPackets): their ratio is the pass's overhead.
	PacketsSent   int     `json:"packets_sent"`
	PacketsMin    int     `json:"packets_min"`
	Damaged       []int   `json:"damaged"` // frames the decoder concealed (decode.Stats.Damaged)
	Completed     int     `json:"jobs_completed"`
	Failed        int     `json:"jobs_failed"`
	DecodeSeconds float64 `json:"decode_resize_s"` // the pass, fan-out included
	// LoaderFrames are the frames harness loaders returned for the pass's loader jobs, in
	// LoaderPasses decoding passes of their own readers (docs/loaders.md).
	LoaderFrames int `json:"loader_frames,omitempty"`
	LoaderPasses int `json:"loader_passes,omitempty"`
}

// SinkError wraps an error of a Sink: the pass stopped because its output is broken, not the video.
type SinkError struct{ Err error }

func (e *SinkError) Error() string { return e.Err.Error() }
func (e *SinkError) Unwrap() error { return e.Err }

// workers is how many goroutines resize frames while the decoder goes on (FFmpeg's own threads
// decode meanwhile).
func workers() int { return min(max(runtime.GOMAXPROCS(0), 1), 4) }

// jobState is one job during a pass.
type jobState struct {
	j       *Job
	w       JobWriter
	mu      sync.Mutex
	next    int            // next plan position to hand to w
	pending map[int][]byte // positions finished out of order, waiting for their turn
	pts     []int64
	psnr    []*float64
	free    [][]byte // written buffers, reused for the next frames (allocation-free steady state)
	damaged []int    // frame indices delivered although the decoder concealed them (keep policy)
	// loaderErr: why a loader job's reader did not give its frames.
	loaderErr error
	done      bool
	aborted   bool
}

// take returns an empty buffer of the job's frame size, from the free list when it has one.
func (s *jobState) take() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		b := s.free[n-1]
		s.free = s.free[:n-1]
		return b[:0]
	}
	return make([]byte, 0, s.j.FrameBytes())
}

// Run decodes the union of jobs' frames from src in one forward pass and hands every job's input to
// sink. Jobs whose frames cannot all be decoded are returned as JobErrors (their writers aborted);
// the error is for the pass as a whole: the video cannot be read (every unfinished job is aborted),
// the context ended, or a sink failed (*SinkError).
func Run(ctx context.Context, v Video, src Source, jobs []*Job, sink Sink) (Stats, []JobError, error) {
	var st Stats
	states := make([]*jobState, 0, len(jobs))
	abortAll := func(err error) {
		for _, s := range states {
			s.abort(err)
		}
	}
	need := map[int][]*jobState{}
	var loaded []*jobState // jobs a harness loader's reader builds
	for _, j := range jobs {
		if j.norm == nil {
			abortAll(errors.New("aborted"))
			return st, nil, fmt.Errorf("%w: job %s was not made by PlanJobs", ErrOptions, j.Key)
		}
		w, err := sink.Begin(j)
		if err != nil {
			abortAll(err)
			return st, nil, &SinkError{err}
		}
		s := &jobState{j: j, w: w, pending: map[int][]byte{}, pts: make([]int64, j.Frames())}
		if j.Pipeline == cache.PipelineCached {
			s.psnr = make([]*float64, j.Frames())
		}
		states = append(states, s)
		st.Requested += j.Frames()
		if j.Loader != nil {
			loaded = append(loaded, s)
			continue
		}
		seen := map[int]bool{}
		for _, x := range j.Selection.Indices {
			if !seen[x] {
				seen[x] = true
				need[x] = append(need[x], s)
			}
		}
	}
	union := Union(jobs)
	st.Union = len(union)
	if len(union) == 0 && len(loaded) == 0 {
		return st, nil, nil
	}

	t0 := time.Now()
	p := &pass{ctx: ctx, v: v, need: need}
	var rerr error
	if len(union) > 0 {
		var ds decode.Stats
		ds, rerr = p.read(src, union)
		st.Decoded, st.CodecFrames, st.Seeks, st.Damaged = ds.Converted, ds.Decoded, ds.Seeks, ds.Damaged
		st.PacketsSent, st.PacketsMin = ds.PacketsSent, ds.MinPackets
	}
	if len(loaded) > 0 && p.failed() == nil && ctx.Err() == nil {
		ls, err := p.runLoaders(loaded)
		st.LoaderFrames, st.LoaderPasses = ls.frames, ls.passes
		if err != nil {
			p.sinkErr = err
		}
	}
	st.DecodeSeconds = math.Round(time.Since(t0).Seconds()*1000) / 1000

	var jerrs []JobError
	var fatal error
	switch {
	case p.sinkErr != nil:
		fatal = &SinkError{p.sinkErr}
	case p.fanErr != nil:
		fatal = p.fanErr
	case rerr != nil && !errors.Is(rerr, decode.ErrFrameFailed):
		fatal = rerr
	case ctx.Err() != nil && len(loaded) > 0:
		fatal = ctx.Err()
	}
	for _, s := range states {
		s.mu.Lock()
		done := s.done
		s.mu.Unlock()
		if done {
			st.Completed++
			continue
		}
		st.Failed++
		err := fatal
		switch {
		case err != nil:
		case s.loaderErr != nil:
			err = &configError{path: v.Path, config: s.j.Config.ID, err: s.loaderErr}
			jerrs = append(jerrs, JobError{Job: s.j, Err: err})
		default:
			err = fmt.Errorf("%s: config %s: %w", v.Path, s.j.Config.ID, missingFrames(s, rerr))
			jerrs = append(jerrs, JobError{Job: s.j, Err: err})
		}
		s.abort(err)
	}
	return st, jerrs, fatal
}

// missingFrames names the frames a job lacked, from the decoder's error when it has them.
func missingFrames(s *jobState, rerr error) error {
	failed, damaged := map[int]bool{}, map[int]bool{}
	for _, i := range decode.FailedFrames(rerr) {
		failed[i] = true
	}
	for _, i := range decode.DamagedFrames(rerr) {
		damaged[i] = true
	}
	var lacking, concealed []int
	for _, x := range s.j.Selection.Indices[s.next:] {
		switch {
		case failed[x] && !containsInt(lacking, x):
			lacking = append(lacking, x)
		case damaged[x] && !containsInt(concealed, x):
			concealed = append(concealed, x)
		}
	}
	var errs []error
	if len(lacking) > 0 {
		errs = append(errs, fmt.Errorf("frame(s) %v failed to decode: %w", lacking, decode.ErrFrameFailed))
	}
	if len(concealed) > 0 {
		errs = append(errs, fmt.Errorf("frame(s) %v damaged (the decoder concealed corrupt data; --on-damaged keep uses them): %w", concealed, decode.ErrDamaged))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if rerr != nil {
		return rerr
	}
	return fmt.Errorf("frame %d was not delivered: %w", s.j.Selection.Indices[s.next], decode.ErrFrameFailed)
}

func containsInt(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func (s *jobState) abort(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.aborted {
		return
	}
	s.aborted = true
	s.pending = nil
	s.w.Abort(err)
}

// deliver hands data, the bytes of every position in positions (one frame's, duplicates included),
// to the writer in plan order: positions whose turn has not come wait in pending. A buffer goes back
// to the free list once no waiting position refers to it.
func (s *jobState) deliver(positions []int, data []byte, t frameTask, psnr *float64, v Video) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.aborted {
		return nil
	}
	if t.damaged {
		s.damaged = append(s.damaged, t.index)
	}
	for _, pos := range positions {
		s.pts[pos] = t.pts
		if s.psnr != nil {
			s.psnr[pos] = psnr
		}
		s.pending[pos] = data
	}
	for {
		d, ok := s.pending[s.next]
		if !ok {
			break
		}
		delete(s.pending, s.next)
		if err := s.w.Frame(s.next, d); err != nil {
			return err
		}
		s.next++
		if !s.referenced(d) && len(s.free) < 2 {
			s.free = append(s.free, d)
		}
	}
	if s.next < s.j.Frames() {
		return nil
	}
	s.done = true
	s.free = nil
	slices.Sort(s.damaged)
	return s.w.Done(&Result{Video: v, Job: s.j, PTS: s.pts, PSNR: s.psnr, Damaged: append([]int{}, s.damaged...)})
}

// referenced reports whether a waiting position still holds buffer d.
func (s *jobState) referenced(d []byte) bool {
	for _, p := range s.pending {
		if len(p) > 0 && len(d) > 0 && &p[0] == &d[0] {
			return true
		}
	}
	return false
}

// pass is one decoding pass with its fan-out pool.
type pass struct {
	ctx  context.Context
	v    Video
	need map[int][]*jobState

	mu      sync.Mutex
	sinkErr error // a writer failed: stop
	fanErr  error // a frame could not be resized or converted: stop
}

func (p *pass) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sinkErr != nil {
		return p.sinkErr
	}
	return p.fanErr
}

// frameTask is one decoded frame, owned by the fan-out (the decoder's frame is only borrowed).
type frameTask struct {
	img     *rgb.Image
	index   int
	pts     int64
	damaged bool
}

// read decodes the union once; each frame is copied out of the decoder and handed to a small pool of
// workers that serve every job needing it. The channel is short, so memory holds a few source frames
// and the outputs in flight.
func (p *pass) read(src Source, union []int) (decode.Stats, error) {
	n := workers()
	ch := make(chan frameTask, n)
	// Source buffers are recycled: a fresh 6 MB allocation per 1080p frame costs more than the copy.
	free := make(chan *rgb.Image, 2*n+1)
	take := func(w, h int) *rgb.Image {
		select {
		case m := <-free:
			if m.W == w && m.H == h {
				return m
			}
		default:
		}
		return rgb.New(w, h)
	}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := &scratch{out: [2]map[resize.Target]*rgb.Image{{}, {}}}
			for t := range ch {
				if p.failed() == nil {
					p.serve(t, ws)
				}
				select { // outputs never alias the source, so it can be reused
				case free <- t.img:
				default:
				}
			}
		}()
	}
	st, err := src.Read(union, func(f *decode.Frame) error {
		if err := p.ctx.Err(); err != nil {
			return err
		}
		if err := p.failed(); err != nil {
			return err
		}
		img := take(f.W, f.H)
		for y := 0; y < f.H; y++ {
			copy(img.Row(y), f.Row(y))
		}
		ch <- frameTask{img: img, index: f.Index, pts: f.PTS, damaged: f.Damaged}
		return nil
	})
	close(ch)
	wg.Wait()
	return st, err
}

// scratch is one fan-out worker's reusable buffers: its resize outputs per target (raw, cached) and
// the float path's intermediates, so the steady state allocates nothing per frame.
type scratch struct {
	out [2]map[resize.Target]*rgb.Image
	u8  []byte
	f32 []float32
	f16 []uint16
	pos []int
}

// frameSource is one source image of a frame (raw, or its JPEG round trip) and the resizes its jobs
// need, each done once.
type frameSource struct {
	img     *rgb.Image
	targets []resize.Target
	at      map[resize.Target]int
	out     []*rgb.Image
}

// sourceOf is which of a frame's sources a job reads: 0 raw, 1 cached (JPEG round trip).
func sourceOf(j *Job) int {
	if j.Pipeline == cache.PipelineCached {
		return 1
	}
	return 0
}

// serve gives one decoded frame to every job that needs it. The JPEG round trip (cached pipeline) is
// done once per frame, and each distinct output size is resized once per source through
// resize.FanOut, however many jobs share it.
func (p *pass) serve(t frameTask, ws *scratch) {
	fail := func(err error) {
		p.mu.Lock()
		if p.fanErr == nil {
			p.fanErr = fmt.Errorf("%s: frame %d: %w", p.v.Path, t.index, err)
		}
		p.mu.Unlock()
	}
	states := p.need[t.index]
	srcs, psnr, err := sources(t, states)
	if err == nil {
		err = fanOut(&srcs, ws)
	}
	if err != nil {
		fail(err)
		return
	}
	for _, s := range states {
		j := s.j
		sc := &srcs[sourceOf(j)]
		tg := resize.LayoutTargets(j.Layout, j.Spec.Kernel)
		resized := sc.out[sc.at[tg[0]]]
		var thumb *rgb.Image
		if len(tg) > 1 {
			thumb = sc.out[sc.at[tg[1]]]
		}
		data, err := render(j, resized, thumb, s.take(), ws)
		if err != nil {
			fail(err)
			return
		}
		ws.pos = ws.pos[:0]
		for pos, x := range j.Selection.Indices {
			if x == t.index {
				ws.pos = append(ws.pos, pos)
			}
		}
		if err := s.deliver(ws.pos, data, t, psnr, p.v); err != nil {
			p.mu.Lock()
			if p.sinkErr == nil {
				p.sinkErr = err
			}
			p.mu.Unlock()
			return
		}
	}
}

// sources are a frame's raw and cached images with the resize targets of the jobs that read each; the
// JPEG round trip is made once, when a job needs it, with its PSNR against the raw frame.
func sources(t frameTask, states []*jobState) ([2]frameSource, *float64, error) {
	var srcs [2]frameSource
	var cached *rgb.Image
	var psnr *float64
	for _, s := range states {
		w := sourceOf(s.j)
		if w == 1 && cached == nil {
			var err error
			if cached, err = resize.JPEGRoundTrip(t.img, resize.PillowJPEGQuality); err != nil {
				return srcs, nil, err
			}
			psnr = psnrOrNil(t.img, cached)
		}
		sc := &srcs[w]
		if sc.at == nil {
			sc.img, sc.at = t.img, map[resize.Target]int{}
			if w == 1 {
				sc.img = cached
			}
		}
		for _, tg := range resize.LayoutTargets(s.j.Layout, s.j.Spec.Kernel) {
			if _, ok := sc.at[tg]; !ok {
				sc.at[tg] = len(sc.targets)
				sc.targets = append(sc.targets, tg)
			}
		}
	}
	return srcs, psnr, nil
}

// fanOut resizes each source to its targets, into the worker's reusable outputs.
func fanOut(srcs *[2]frameSource, ws *scratch) error {
	for w := range srcs {
		sc := &srcs[w]
		if len(sc.targets) == 0 {
			continue
		}
		reuse := make([]*rgb.Image, len(sc.targets))
		for i, tg := range sc.targets {
			reuse[i] = ws.out[w][tg]
		}
		out, err := resize.FanOutInto(sc.img, sc.targets, reuse)
		if err != nil {
			return err
		}
		for i, tg := range sc.targets {
			ws.out[w][tg] = out[i]
		}
		sc.out = out
	}
	return nil
}

// render appends to dst (empty, with the job's frame size as capacity) one plan position's bytes of
// a job's frames tensor: the layout's images, packed, in the job's dtype and tensor layout. A padded
// layout's padding is zero in that dtype (0.0 after normalisation, as PaddleOCR pads).
func render(j *Job, resized, thumb *rgb.Image, dst []byte, ws *scratch) ([]byte, error) {
	if j.DType == cache.U8 {
		return resize.AppendLayout(dst, j.Layout, resized, thumb)
	}
	u8, err := resize.AppendLayout(ws.u8[:0], j.Layout, resized, thumb)
	if err != nil {
		return nil, err
	}
	ws.u8 = u8
	per := j.Width * j.Height * 3
	out := dst
	nl := j.norm
	for k := 0; k < j.Images; k++ {
		img := &rgb.Image{W: j.Width, H: j.Height, Stride: 3 * j.Width, Pix: u8[k*per : (k+1)*per]}
		switch j.DType {
		case cache.F32:
			ws.f32 = growTo(ws.f32, per)
			if err := native.ToFloat32(ws.f32, img, nl.norm, nl.layout); err != nil {
				return nil, err
			}
			zeroPad(ws.f32, j.Layout, nl.layout)
			for _, x := range ws.f32 {
				out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
			}
		case cache.F16:
			ws.f16 = growTo(ws.f16, per)
			if err := native.ToFloat16(ws.f16, img, nl.norm, nl.layout); err != nil {
				return nil, err
			}
			zeroPad(ws.f16, j.Layout, nl.layout)
			for _, x := range ws.f16 {
				out = binary.LittleEndian.AppendUint16(out, x)
			}
		}
	}
	return out, nil
}

// zeroPad sets a padded layout's padding to 0 in one image's float tensor t (float32 values or
// float16 bits, whose zero is 0 too): normalising the canvas's zero pixels made them -mean/std.
func zeroPad[T float32 | uint16](t []T, l geom.Layout, layout native.Layout) {
	if l.Pad == nil {
		return
	}
	cw, ch, iw, ih := l.Pad.W, l.Pad.H, l.Resize.W, l.Resize.H
	for y := 0; y < ch; y++ {
		from := iw
		if y >= ih {
			from = 0
		}
		if layout == native.NHWC {
			clear(t[(y*cw+from)*3 : (y+1)*cw*3])
			continue
		}
		for c := 0; c < 3; c++ {
			clear(t[c*cw*ch+y*cw+from : c*cw*ch+(y+1)*cw])
		}
	}
}

func growTo[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// psnrOrNil is the cached pipeline's per-frame PSNR, rounded to 1e-4 dB; nil when identical.
func psnrOrNil(a, b *rgb.Image) *float64 {
	db, ok := rgb.PSNR(a, b)
	if !ok || math.IsInf(db, 1) {
		return nil
	}
	v := math.Round(db*1e4) / 1e4
	return &v
}

// OneLine is err's message on one line (joined errors are separated by "; ").
func OneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
