package pipeline

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/engine/worker"
	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/resize"
)

// ErrOptions marks options that cannot build any input (an unknown kernel, dtype or normalisation).
var ErrOptions = errors.New("bad pipeline options")

// Options fix everything besides the grid that decides an input's bytes. The zero value is the
// default: each config's own pipeline (raw when it names none), Pillow-exact bicubic, uint8 RGB,
// display rotation applied, decoding in process.
type Options struct {
	Pipelines []string    // overrides every config's pipeline (nil: the config's own, raw if unset)
	Kernel    string      // resize kernel ("" = resize.DefaultKernel)
	DType     cache.DType // "" = U8
	// Norm is a float dtype's normalisation: one of native.NormNames() ("" = clip), or
	// "mean=M|M|M,std=S|S|S" (x/255 - mean)/std per channel; "none" for U8 (ParseNorm).
	Norm string
	// Layout is the frames tensor's layout: "NHWC" ("" = the default: H×W×3, the RGB24 order) or,
	// with a float dtype, "NCHW" (one plane per channel, what ONNX vision models take).
	Layout       string
	NoAutorotate bool // do not apply the container's display rotation
	// Stream is the video stream to decode (its index in the file); nil = FFmpeg's best video
	// stream. The index used enters every key, manifest line and object.
	Stream *int
	// OnDamaged: what a frame the decoder concealed does (decode.DamagedFail, the default, fails the
	// pairs that need it; decode.DamagedKeep uses it and records it as damaged).
	OnDamaged decode.DamagePolicy
	// Worker, when set, decodes each video in supervised `framesweep worker` child processes with
	// these limits (untrusted files: a crash or hang fails that video only).
	Worker *worker.Limits
	// WorkerUsage, when set with Worker, is called after every worker job with what its process used
	// (the memory benchmark reports the worker's peak).
	WorkerUsage func(worker.Usage)
	// workers, set by WithWorkerPool, runs the worker jobs in processes that serve many videos.
	workers *worker.Runner

	// What follows changes how a video is decoded or described, not an input's bytes.

	// Threads is the decoder's thread count (0: FFmpeg's default); frames are identical whatever it is.
	Threads int
	// HWAccel asks for hardware decoding ("", "none", "cuda", "vaapi", "auto"; decode falls back to the
	// CPU when the device cannot take the stream). Hardware frames are not FFmpeg's CPU frames bit for
	// bit, so PlanJobs refuses it: only key-less readers (frames, probe, the benchmarks) take it.
	HWAccel string
	// FramesDetail makes a Source's Info carry every frame's pts and key flag (probe --frames-detail,
	// plan's keyframes).
	FramesDetail bool
}

// resolved is Options with defaults filled in and validated.
type resolved struct {
	Options
	norm   native.Norm
	layout native.Layout
}

func (o Options) resolve() (resolved, error) {
	r := resolved{Options: o}
	if r.Kernel == "" {
		r.Kernel = resize.DefaultKernel
	}
	if err := resize.CheckKernel(r.Kernel); err != nil {
		return r, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	if _, err := decode.ParseDamagePolicy(string(r.OnDamaged)); err != nil {
		return r, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	if _, err := decode.ParseHWAccel(r.HWAccel); err != nil {
		return r, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	for _, p := range r.Pipelines {
		if p != cache.PipelineRaw && p != cache.PipelineCached {
			return r, fmt.Errorf("%w: pipeline %q (want raw or cached)", ErrOptions, p)
		}
	}
	switch r.DType {
	case "":
		r.DType = cache.U8
	case cache.U8, cache.F32, cache.F16:
	default:
		return r, fmt.Errorf("%w: dtype %q (want U8, F32 or F16)", ErrOptions, r.DType)
	}
	switch r.Layout {
	case "", "NHWC":
		r.Layout, r.layout = "NHWC", native.NHWC
	case "NCHW":
		if r.DType == cache.U8 {
			return r, fmt.Errorf("%w: layout NCHW needs a float dtype (uint8 frames are images, H×W×3)", ErrOptions)
		}
		r.layout = native.NCHW
	default:
		return r, fmt.Errorf("%w: layout %q (want NHWC or NCHW)", ErrOptions, r.Layout)
	}
	if r.DType == cache.U8 {
		r.Norm = "none"
		return r, nil
	}
	if r.Norm == "" {
		r.Norm = "clip"
	}
	name, n, err := ParseNorm(r.Norm)
	if err != nil {
		return r, err
	}
	r.Norm, r.norm = name, n
	return r, nil
}

// ParseNorm reads a float tensor's normalisation: a name of native.NormNames(), or
// "mean=M|M|M,std=S|S|S" (x/255 − mean)/std per channel (one value stands for all three). It returns
// the canonical name the cache key records: the named normalisation with the same values when there
// is one ("mean=0.5,std=0.5" is "half"), else the values spelled out as float32s.
func ParseNorm(s string) (string, native.Norm, error) {
	if n, err := native.LookupNorm(s); err == nil {
		return s, n, nil
	}
	if !strings.HasPrefix(s, "mean=") && !strings.HasPrefix(s, "std=") {
		return "", native.Norm{}, fmt.Errorf("%w: normalisation %q (known: %s, or mean=M|M|M,std=S|S|S)", ErrOptions, s, strings.Join(native.NormNames(), ", "))
	}
	n := native.Norm{Scale: 1.0 / 255}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		var dst *[3]float32
		switch k {
		case "mean":
			dst = &n.Mean
		case "std":
			dst = &n.Std
		default:
			return "", n, fmt.Errorf("%w: normalisation %q: unknown key %q (want mean=M|M|M,std=S|S|S)", ErrOptions, s, k)
		}
		parts := strings.Split(v, "|")
		if len(parts) == 1 {
			parts = []string{v, v, v}
		}
		for c, p := range parts {
			f, err := strconv.ParseFloat(p, 32)
			if len(parts) != 3 || err != nil || math.IsNaN(f) || math.IsInf(f, 0) || k == "std" && f == 0 {
				return "", n, fmt.Errorf("%w: normalisation %q: %s=%q (want one finite value or three separated by |, std non-zero)", ErrOptions, s, k, v)
			}
			dst[c] = float32(f)
		}
	}
	if n.Std == ([3]float32{}) {
		return "", n, fmt.Errorf("%w: normalisation %q: no std", ErrOptions, s)
	}
	for _, name := range native.NormNames() {
		if named, _ := native.LookupNorm(name); named == n {
			return name, n, nil
		}
	}
	f := func(x [3]float32) string {
		return strconv.FormatFloat(float64(x[0]), 'g', -1, 32) + "|" + strconv.FormatFloat(float64(x[1]), 'g', -1, 32) + "|" + strconv.FormatFloat(float64(x[2]), 'g', -1, 32)
	}
	return "mean=" + f(n.Mean) + ",std=" + f(n.Std), n, nil
}

// keyable refuses what no cache key names (PlanJobs' inputs are keyed; PlanFrames' are not).
func (o resolved) keyable() error {
	if hw, _ := decode.ParseHWAccel(o.HWAccel); hw != decode.HWNone {
		return fmt.Errorf("%w: hwaccel %s: hardware-decoded frames are not FFmpeg's CPU frames bit for bit, so no cache key can name them", ErrOptions, hw)
	}
	return nil
}

// decodeOptions is how videos are opened.
func (o Options) decodeOptions() decode.Options {
	return decode.Options{NoAutorotate: o.NoAutorotate, Stream: o.Stream, OnDamaged: o.OnDamaged, Threads: o.Threads, HWAccel: o.HWAccel}
}

// Check validates the options without planning anything.
func (o Options) Check() error {
	_, err := o.resolve()
	return err
}

// WithWorkerPool returns o whose worker jobs (o.Worker set) run in one pool of at most size worker
// processes, each serving one video's jobs after another's (worker.Runner.Pool: a process is replaced
// when it dies, goes over the memory limit, a job times out or is abandoned), and the function that
// ends the processes: call it once every video is done. Without o.Worker, o and a no-op. Without a
// pool each job starts a process of its own: a probe and a read per video.
func (o Options) WithWorkerPool(size int) (Options, func()) {
	if o.Worker == nil {
		return o, func() {}
	}
	r := &worker.Runner{Limits: *o.Worker, Usage: o.WorkerUsage, Pool: max(size, 1)}
	o.workers = r
	return o, func() { r.Close() }
}

// runner is what runs o's worker jobs: its pool, else a Runner that starts a process per job.
func (o Options) runner() *worker.Runner {
	if o.workers != nil {
		return o.workers
	}
	return &worker.Runner{Limits: *o.Worker, Usage: o.WorkerUsage}
}
