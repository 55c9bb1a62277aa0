// Package load runs a harness loader (package loader) on a video: it decodes the frames that
// loader's reader returns, the way that reader decodes them (stream, rotation, colour conversion,
// frame count, container quirks, fallbacks), and for qwen-vl-utils also the resized tensor
// fetch_video hands the model's processor. It does not open videos: the engine's source layer does
// (pipeline.RunLoader opens the video with DecodeOptions and calls Run), and the engine's grids
// (`loader:`), `frames --loader`, `plan --loader` and serve's "loader" requests all come through it.
package load

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/rgb"
)

// DefaultMaxFrames bounds the frames one Load returns when Options.MaxFrames is 0 (the every-frame
// paths of lmms-eval return a whole video).
const DefaultMaxFrames = 4096

// Options bound a Load. The zero value is the default.
type Options struct {
	Threads      int // decoder threads (0 = FFmpeg's automatic count, as the Python readers)
	MaxFrames    int // most frames returned (0 = DefaultMaxFrames); more is ErrTooMany
	MaxFrameArea int // decode.Options.MaxFrameArea (0 = its default)
	// PlanOnly decodes as the reader does (its counts, fallbacks and failures depend on decoding) but
	// converts nothing: Frames carry positions, pts and sizes, Image and Resized are nil (ResizedW/H
	// are still set). For `plan`.
	PlanOnly bool
}

// ErrTooMany: the loader would return more frames than Options.MaxFrames.
var ErrTooMany = errors.New("the loader returns more frames than the limit")

// Frame is one frame as the loader returns it.
type Frame struct {
	// Position is the frame's number in the reader's own numbering: the decoder output ordinal for
	// the PyAV readers, the position in pts order for torchvision's read_video, the frame index for
	// decord and torchcodec.
	Position int   `json:"position"`
	PTS      int64 `json:"pts"`
	HasPTS   bool  `json:"has_pts"`
	Width    int   `json:"width"` // of Image (also under Options.PlanOnly)
	Height   int   `json:"height"`
	// Image is what the reader returns (uint8 RGB, before the model's processor).
	Image *rgb.Image `json:"-"`
	// Resized is qwen-vl-utils' fetch_video output for this frame (the float tensor's values, which
	// are integers 0..255), nil for other loaders.
	Resized *rgb.Image `json:"-"`
}

// Result is what one Load returns, with the provenance a record needs.
type Result struct {
	Loader      string `json:"loader"`
	Path        string `json:"path"`
	StreamIndex int    `json:"stream_index"`
	// TimeBase is the stream's time base: the unit of every Frame.PTS.
	TimeBase     decode.Rational `json:"time_base"`
	FramesHeader int64           `json:"frames_header"` // the container's nb_frames (0: none)
	Count        int             `json:"count"`         // the frame count the loader's rules used
	CountFrom    string          `json:"count_from"`    // loader.Count* (header, decoded, index, decord)
	FPS          float64         `json:"fps"`           // the rate the rules used
	Decoded      int             `json:"decoded"`       // pictures the decoder output (sequential readers)
	Passes       int             `json:"passes"`        // decoding passes made
	// AllFrames: the reader returned every frame (lmms-eval's webm/mkv path or fallback), why in Reason.
	AllFrames bool     `json:"all_frames,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	SampleFPS float64  `json:"sample_fps,omitempty"` // qwen-vl-utils' sample_fps
	Width     int      `json:"width"`                // of the returned frames
	Height    int      `json:"height"`
	ResizedW  int      `json:"resized_width,omitempty"`
	ResizedH  int      `json:"resized_height,omitempty"`
	Frames    []Frame  `json:"frames"`
	Notes     []string `json:"notes,omitempty"`
}

// Positions lists the frames' positions.
func (r *Result) Positions() []int {
	out := make([]int, len(r.Frames))
	for i, f := range r.Frames {
		out[i] = f.Position
	}
	return out
}

// Reader is a video opened for a loader (DecodeOptions says how): what the loaders read of it. The
// engine's source layer opens it and hands it to Run (pipeline.RunLoader: a pipeline.LocalSource, no
// decoder reached any other way; TestOneSourceLayer).
type Reader interface {
	Info() decode.Info
	Header() decode.StreamHeader
	Index() decode.Index
	NumFrames() int
	Packets() int
	Read(indices []int, fn func(*decode.Frame) error) (decode.Stats, error)
	Sequential(o decode.SeqOptions, fn func(*decode.SeqFrame) (stop bool, err error)) (decode.SeqStats, error)
}

// DecodeOptions is how the named loader's reader opens a video: its stream, rotation, colour
// conversion, probe limits and damage handling (and o's threads and frame-area bound). framesweep's
// own mode is not a harness reader: it is ErrRequest here.
func DecodeOptions(name string, o Options) (decode.Options, error) {
	spec, err := loader.Lookup(name)
	if err != nil {
		return decode.Options{}, err
	}
	switch name {
	case loader.LmmsEval, loader.QwenVLUtils:
		return pyavOptions(o), nil
	case loader.Framesweep:
		return decode.Options{}, &loader.Error{Loader: name, Detail: "framesweep's own mode reads the indices a preset or policy plans (decode.Read, pipeline), not a harness's reader", Err: loader.ErrRequest}
	}
	// decord and torchcodec: FFmpeg's best stream, their filter-graph colours, rotation as the spec says.
	return decode.Options{NoAutorotate: !spec.Autorotate, Colour: decode.ColourFilterBilinear, OnDamaged: decode.DamagedKeep,
		Threads: o.Threads, MaxFrameArea: o.MaxFrameArea, ProbeSize: 5_000_000, AnalyzeDuration: 5 * time.Second}, nil
}

// Run runs the named loader on v, the video at path opened with DecodeOptions(name, o): exactly the
// frames that loader's reader returns for each request (and, for qwen-vl-utils, fetch_video's resized
// frames), decoding v once for all of them (twice at most: lmms-eval's every-frame fallback, or a
// second torchvision pass when the index scan mispredicted what read_video returns). path is the
// string the harness passes (lmms-eval looks for "webm"/"mkv" in it). Each request gets its own result
// or error (results[i] is nil when errs[i] is not; a video for which the harness's reader fails fails
// here too, with an error matching loader.ErrUpstream that says where); err is set when nothing could
// be done at all. pipeline.RunLoader opens the video and calls it.
func Run(ctx context.Context, v Reader, path, name string, reqs []loader.Request, o Options) (results []*Result, errs []error, err error) {
	if _, err := DecodeOptions(name, o); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if o.MaxFrames == 0 {
		o.MaxFrames = DefaultMaxFrames
	}
	if o.MaxFrames < 0 {
		return nil, nil, fmt.Errorf("%s: %w: negative frame limit", path, loader.ErrRequest)
	}
	results, errs = make([]*Result, len(reqs)), make([]error, len(reqs))
	var todo []int
	for i, r := range reqs {
		if errs[i] = loader.Check(name, r); errs[i] != nil {
			errs[i] = fmt.Errorf("%s: %w", path, errs[i])
		} else {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return results, errs, nil
	}
	sub := make([]loader.Request, len(todo))
	for k, i := range todo {
		sub[k] = reqs[i]
	}
	var res []*Result
	var rerrs []error
	switch name {
	case loader.LmmsEval:
		res, rerrs, err = lmmsEval(ctx, v, path, sub, o)
	case loader.QwenVLUtils:
		res, rerrs, err = qwenTorchvision(ctx, v, path, sub, o)
	default:
		res, rerrs, err = indexed(ctx, v, path, name, sub, o)
	}
	if err != nil {
		return nil, nil, err
	}
	tb := v.Header().TimeBase
	for k, i := range todo {
		results[i], errs[i] = res[k], rerrs[k]
		if r := results[i]; r != nil {
			r.Loader, r.TimeBase = name, tb
			if len(r.Frames) > 0 {
				r.Width, r.Height = r.Frames[0].Width, r.Frames[0].Height
			}
		}
	}
	return results, errs, nil
}

// pyavOptions open a video as PyAV (and so lmms-eval and torchvision) does: the first video stream,
// no rotation, to_ndarray's colours, libavformat's default probe limits (5 MB, 5 s); a concealed
// frame is handed on, as PyAV hands it on.
func pyavOptions(o Options) decode.Options {
	return decode.Options{FirstVideoStream: true, NoAutorotate: true, Colour: decode.ColourSwsDefault,
		OnDamaged: decode.DamagedKeep, Threads: o.Threads, MaxFrameArea: o.MaxFrameArea,
		ProbeSize: 5_000_000, AnalyzeDuration: 5 * time.Second}
}

func upstream(path, name, format string, a ...any) error {
	return fmt.Errorf("%s: %w", path, &loader.Error{Loader: name, Detail: fmt.Sprintf(format, a...), Err: loader.ErrUpstream})
}

// seqPass decodes v sequentially, converting (a copy of) every frame keep says yes to; stop ends the
// pass after a frame. It returns the frames kept in decoder order, every output's pts, and the
// decoder's refusal (a *decode.SeqError) separately from other errors.
type seqOut struct {
	frames  []Frame
	pts     []int64
	has     []bool
	sizes   [][2]int
	refused error
}

func seqPass(ctx context.Context, v Reader, path string, so decode.SeqOptions, o Options, limit int, keep func(n int, pts int64, has bool) bool, stop func(n int) bool) (seqOut, error) {
	var out seqOut
	_, err := v.Sequential(so, func(f *decode.SeqFrame) (bool, error) {
		if err := ctx.Err(); err != nil {
			return true, err
		}
		out.pts = append(out.pts, f.PTS)
		out.has = append(out.has, f.HasPTS)
		out.sizes = append(out.sizes, [2]int{f.Width, f.Height})
		if keep(f.N, f.PTS, f.HasPTS) {
			if len(out.frames) >= limit {
				return true, fmt.Errorf("%w: more than %d frames", ErrTooMany, limit)
			}
			fr := Frame{Position: f.N, PTS: f.PTS, HasPTS: f.HasPTS, Width: f.Width, Height: f.Height}
			if !o.PlanOnly {
				img, err := f.RGB()
				if err != nil {
					return true, err
				}
				fr.Image = img.Clone()
				fr.Width, fr.Height = img.W, img.H
			}
			out.frames = append(out.frames, fr)
		}
		return stop(f.N), nil
	})
	if errors.Is(err, decode.ErrDecoderRefused) {
		out.refused = err
		err = nil
	}
	if err != nil && errors.Is(err, ErrTooMany) {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return out, err
}

func sameSize(frames []Frame) bool {
	for _, f := range frames[1:] {
		if f.Width != frames[0].Width || f.Height != frames[0].Height {
			return false
		}
	}
	return true
}

// lmmsEval is read_video with the PyAV backend (loader.LmmsEvalPlan, then the decoding of
// record_video_length_stream / record_video_length_packet), for several requests: one stream pass
// over the union of their indices, and one every-frame pass for those whose reader returns every
// frame.
func lmmsEval(ctx context.Context, v Reader, path string, reqs []loader.Request, o Options) ([]*Result, []error, error) {
	name := loader.LmmsEval
	h := v.Header()
	rate := loader.Rate{Num: h.AvgFrameRate.Num, Den: h.AvgFrameRate.Den}
	plans := make([]loader.LmmsPlan, len(reqs))
	res := make([]*Result, len(reqs))
	errs := make([]error, len(reqs))
	want, maxEnd := map[int]bool{}, -1
	for i, r := range reqs {
		plans[i] = loader.LmmsEvalPlan(path, h.NbFrames, rate, r)
		res[i] = &Result{Path: path, StreamIndex: h.Index, FramesHeader: h.NbFrames, Count: int(h.NbFrames), CountFrom: loader.CountHeader, FPS: rate.Float64()}
		for _, k := range plans[i].Indices {
			want[k] = true
			maxEnd = max(maxEnd, k)
		}
	}
	// The stream pass: record_video_length_stream breaks when frame end+1 comes out, so a request
	// whose frame end+1 was delivered before a decoder error is unaffected by it.
	var stream seqOut
	if maxEnd >= 0 {
		var err error
		stream, err = seqPass(ctx, v, path, decode.SeqOptions{FrameThreads: true}, o, o.MaxFrames, func(n int, _ int64, _ bool) bool { return want[n] }, func(n int) bool { return n > maxEnd })
		if err != nil {
			return nil, nil, err
		}
	}
	fallback := false
	for i := range reqs {
		p := &plans[i]
		if p.AllFrames {
			fallback = true
			continue
		}
		res[i].Passes, res[i].Decoded = 1, len(stream.pts)
		if end := p.Indices[len(p.Indices)-1]; stream.refused != nil && end+1 >= len(stream.pts) {
			*p = loader.LmmsPlan{AllFrames: true, Reason: fmt.Sprintf("the stream pass raised (%v): container.seek(0), then every frame", stream.refused)}
			fallback = true
			continue
		}
		in := map[int]bool{}
		for _, k := range p.Indices {
			in[k] = true
		}
		for _, f := range stream.frames {
			if in[f.Position] {
				res[i].Frames = append(res[i].Frames, f)
			}
		}
		if len(res[i].Frames) < len(p.Indices) {
			res[i].Notes = append(res[i].Notes, fmt.Sprintf("%d of the %d indices lie past the %d decoded frames (the header claims %d): not returned", len(p.Indices)-len(res[i].Frames), len(p.Indices), len(stream.pts), h.NbFrames))
		}
	}
	if fallback {
		// record_video_length_packet: every frame; after container.seek(0) unless the path chose it.
		webm := strings.Contains(path, "webm") || strings.Contains(path, "mkv")
		all, err := seqPass(ctx, v, path, decode.SeqOptions{FrameThreads: true, SeekStart: !webm, SeekStream: -1}, o, o.MaxFrames, func(int, int64, bool) bool { return true }, func(int) bool { return false })
		if err != nil {
			return nil, nil, err
		}
		for i, p := range plans {
			if !p.AllFrames {
				continue
			}
			res[i].AllFrames, res[i].Reason = true, p.Reason
			res[i].Passes++
			res[i].Decoded = len(all.pts)
			if all.refused != nil {
				errs[i] = upstream(path, name, "read_video raises: reading every frame fails too (%v)", all.refused)
				continue
			}
			res[i].Frames = all.frames
		}
	}
	for i, r := range res {
		switch {
		case errs[i] != nil:
		case len(r.Frames) == 0:
			errs[i] = upstream(path, name, "read_video raises IndexError: no frame was kept (the header claims %d frames, %d decoded)", h.NbFrames, r.Decoded)
		case !sameSize(r.Frames):
			errs[i] = upstream(path, name, "read_video raises: numpy cannot stack frames of different sizes")
		}
		if errs[i] != nil {
			res[i] = nil
		}
	}
	return res, errs, nil
}

// qwenTorchvision is fetch_video with the torchvision reader: read_video (seek to 0, every frame,
// keyed by pts), then for each request smart_nframes and torch.linspace over what it returned, and
// the resize. One decoding pass serves every request: the index scan predicts read_video's frames,
// the pass converts the predicted picks and checks the prediction; a wrong one costs a second pass.
func qwenTorchvision(ctx context.Context, v Reader, path string, reqs []loader.Request, o Options) ([]*Result, []error, error) {
	name := loader.QwenVLUtils
	h := v.Header()
	res := make([]*Result, len(reqs))
	errs := make([]error, len(reqs))
	if !(loader.Rate{Num: h.AvgFrameRate.Num, Den: h.AvgFrameRate.Den}).Valid() {
		for i := range errs {
			errs[i] = upstream(path, name, "the stream has no average rate: read_video sets no video_fps and fetch_video raises KeyError")
		}
		return res, errs, nil
	}
	fps := h.AvgFrameRate.Float64()
	idx := v.Index()
	pred, _ := loader.TorchvisionFrames(idx.PTS, trueSlice(len(idx.PTS)))
	need := map[int64]bool{}
	for _, r := range reqs {
		if pi, _, err := loader.QwenFrames(name, len(pred), fps, r); err == nil {
			for _, k := range pi {
				need[idx.PTS[pred[k]]] = true
			}
		}
	}
	so := decode.SeqOptions{SeekStart: true, SeekStream: h.Index}
	for pass := 1; pass <= 2; pass++ {
		out, err := seqPass(ctx, v, path, so, o, 1<<30, func(n int, pts int64, has bool) bool { return has && need[pts] }, func(int) bool { return false })
		if err != nil {
			return nil, nil, err
		}
		var seekErr *decode.SeqError
		if errors.As(out.refused, &seekErr) && seekErr.Op == "seek" {
			for i := range errs {
				errs[i] = upstream(path, name, "read_video's seek to 0 fails (%v): it returns no frames and smart_nframes raises", seekErr.Err)
			}
			return res, errs, nil
		}
		missing := qwenSelect(path, out, fps, reqs, res, errs)
		if len(missing) == 0 {
			for i := range res {
				if res[i] != nil {
					res[i].Passes = pass
				}
			}
			break
		}
		if pass == 2 {
			return nil, nil, fmt.Errorf("%s: %s: the second pass did not give the frames the first one listed", path, name)
		}
		need = missing
	}
	for i, r := range res {
		if r == nil {
			continue
		}
		r.StreamIndex, r.FramesHeader = h.Index, h.NbFrames
		if len(r.Frames) > o.MaxFrames {
			res[i], errs[i] = nil, fmt.Errorf("%s: %w: %d frames > %d", path, ErrTooMany, len(r.Frames), o.MaxFrames)
		} else if errs[i] = qwenResize(path, name, r, reqs[i], o.PlanOnly); errs[i] != nil {
			res[i] = nil
		}
	}
	return res, errs, nil
}

// qwenSelect fills each request's result from one pass (read_video's frames, then smart_nframes and
// torch.linspace); it returns the pts of picked frames the pass did not convert (nil when complete).
func qwenSelect(path string, out seqOut, fps float64, reqs []loader.Request, res []*Result, errs []error) map[int64]bool {
	name := loader.QwenVLUtils
	got := map[int64]Frame{}
	for _, f := range out.frames {
		got[f.PTS] = f // the last frame with a pts wins, as in read_video's dict
	}
	order, err := loader.TorchvisionFrames(out.pts, out.has)
	for _, s := range out.sizes {
		if err == nil && s != out.sizes[0] {
			err = upstream(path, name, "read_video raises: numpy cannot stack decoded frames of %dx%d and %dx%d", out.sizes[0][0], out.sizes[0][1], s[0], s[1])
		}
	}
	missing := map[int64]bool{}
	for i, r := range reqs {
		res[i], errs[i] = nil, nil
		if err != nil {
			errs[i] = fmt.Errorf("%s: %w", path, err)
			continue
		}
		sel, sfps, err := loader.QwenFrames(name, len(order), fps, r)
		if err != nil {
			errs[i] = fmt.Errorf("%s: %w", path, err)
			continue
		}
		rr := &Result{Path: path, StreamIndex: -1, CountFrom: loader.CountDecoded, Count: len(order), FPS: fps, Decoded: len(out.pts), SampleFPS: sfps}
		for _, k := range sel {
			n := order[k]
			f, ok := got[out.pts[n]]
			if !ok || f.Position != n {
				missing[out.pts[n]] = true
				continue
			}
			rr.Frames = append(rr.Frames, Frame{Position: k, PTS: f.PTS, HasPTS: true, Image: f.Image, Width: f.Width, Height: f.Height})
		}
		if out.refused != nil {
			rr.Notes = append(rr.Notes, fmt.Sprintf("the decoder stopped read_video early (%v); torchvision keeps the %d frames before it", out.refused, len(order)))
		}
		res[i] = rr
	}
	if len(missing) == 0 {
		return nil
	}
	for pts := range got { // keep what the first pass converted: the second converts the union
		missing[pts] = true
	}
	return missing
}

func trueSlice(n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = true
	}
	return b
}

// qwenResize fills Resized: fetch_video's smart_resize target for len(Frames) frames, then
// torchvision's bicubic antialias resize of each frame.
func qwenResize(path, name string, res *Result, req loader.Request, planOnly bool) error {
	if len(res.Frames) == 0 {
		return nil
	}
	f0 := res.Frames[0]
	w, h, err := loader.QwenSize(name, f0.Width, f0.Height, len(res.Frames), req)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	res.ResizedW, res.ResizedH = w, h
	if planOnly {
		return nil
	}
	// torchvision's resize: the torch-bicubic kernel (SIMD; byte-equal to Debian's torch 1.13,
	// resize/torchvision_test.go).
	r, err := resize.New(resize.TorchBicubic, f0.Width, f0.Height, w, h)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", path, name, err)
	}
	for i := range res.Frames {
		dst := rgb.New(w, h)
		if err := r.Resize(dst, res.Frames[i].Image); err != nil {
			return fmt.Errorf("%s: %s: %w", path, name, err)
		}
		res.Frames[i].Resized = dst
	}
	return nil
}

// indexed runs the readers that address frames by index over FFmpeg's best stream (decord,
// torchcodec): the count and rate as each reader states them, the indices from the rules, the
// frames from decode's exact access, one pass for every request. Written from the upstream sources;
// none of these readers installs here (loader.Spec.Verified is false).
func indexed(ctx context.Context, v Reader, path, name string, reqs []loader.Request, o Options) ([]*Result, []error, error) {
	spec, _ := loader.Lookup(name)
	h, in := v.Header(), v.Info()
	var err error
	rate := loader.Rate{Num: h.AvgFrameRate.Num, Den: h.AvgFrameRate.Den}
	count, fps := v.NumFrames(), 0.0
	if spec.Count == loader.CountDecord {
		count, fps = loader.DecordCount(v.Packets(), h.NbFrames, rate, in.DurationS), rate.Float64()
	} else if in.DurationS > 0 { // torchcodec's exact mode: fps = frames / duration from the content
		fps = float64(count) / in.DurationS
	}
	res := make([]*Result, len(reqs))
	errs := make([]error, len(reqs))
	picks := make([][]int, len(reqs))
	var union []int
	for i, r := range reqs {
		var idx []int
		var sfps float64
		switch name {
		case loader.VLMEvalKit:
			idx, err = loader.VLMEvalKitIndices(count, fps, r)
		case loader.LmmsEvalTorchcodec:
			idx, err = loader.LmmsEvalTorchcodecPlan(count, fps, r)
		default:
			idx, sfps, err = loader.QwenFrames(name, count, fps, r)
		}
		switch {
		case err != nil:
			errs[i] = fmt.Errorf("%s: %w", path, err)
		case len(idx) > o.MaxFrames:
			errs[i] = fmt.Errorf("%s: %w: %d frames > %d", path, ErrTooMany, len(idx), o.MaxFrames)
		default:
			for _, k := range idx {
				if k >= v.NumFrames() {
					errs[i] = upstream(path, name, "index %d: the reader counts %d frames, %d decode (its count comes from packets or the header)", k, count, v.NumFrames())
					break
				}
			}
		}
		if errs[i] != nil {
			continue
		}
		picks[i] = idx
		union = append(union, idx...)
		res[i] = &Result{Path: path, StreamIndex: h.Index, FramesHeader: h.NbFrames, CountFrom: spec.Count, Count: count, FPS: fps, SampleFPS: sfps, Passes: 1}
	}
	imgs := map[int]*rgb.Image{}
	if o.PlanOnly {
		// An index reader plans without decoding, but a frame the file cuts short (a truncated
		// file's last packet) may not decode: those are decoded here, so the plan fails exactly when
		// reading them does (serve's /v1/plan agrees with /v1/frames on a truncated file).
		if cut := within(v.Index().Cut, union); len(cut) > 0 {
			if _, err := v.Read(cut, func(*decode.Frame) error { return ctx.Err() }); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(union) > 0 && !o.PlanOnly {
		if _, err := v.Read(union, func(f *decode.Frame) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			imgs[f.Index] = f.Image.Clone()
			return nil
		}); err != nil {
			return nil, nil, err
		}
	}
	pts := v.Index().PTS
	for i, idx := range picks {
		if res[i] == nil {
			continue
		}
		for _, k := range idx {
			fr := Frame{Position: k, PTS: pts[k], HasPTS: true, Width: in.OutWidth, Height: in.OutHeight}
			if img := imgs[k]; img != nil {
				if spec.JPEGQuality > 0 {
					if img, err = resize.JPEGRoundTrip(img, spec.JPEGQuality); err != nil {
						return nil, nil, fmt.Errorf("%s: %s: %w", path, name, err)
					}
				}
				fr.Image, fr.Width, fr.Height = img, img.W, img.H
			}
			res[i].Frames = append(res[i].Frames, fr)
		}
		if strings.HasPrefix(name, loader.QwenVLUtils) {
			if errs[i] = qwenResize(path, name, res[i], reqs[i], o.PlanOnly); errs[i] != nil {
				res[i] = nil
			}
		}
	}
	return res, errs, nil
}

// within is the elements of sorted that union holds, in order.
func within(sorted, union []int) []int {
	if len(sorted) == 0 {
		return nil
	}
	in := make(map[int]bool, len(union))
	for _, k := range union {
		in[k] = true
	}
	var out []int
	for _, k := range sorted {
		if in[k] {
			out = append(out, k)
		}
	}
	return out
}
