package pipeline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/worker"
	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/resize"
)

// ErrOptions marks options that cannot build any input (an unknown kernel, dtype or normalisation).
var ErrOptions = errors.New("bad pipeline options")

// Options fix everything besides the grid that decides an input's bytes. The zero value is the
// default: each config's own pipeline (raw when it names none), Pillow-exact bicubic, uint8 RGB,
// display rotation applied, decoding in process.
type Options struct {
	Pipelines    []string    // overrides every config's pipeline (nil: the config's own, raw if unset)
	Kernel       string      // resize kernel ("" = resize.DefaultKernel)
	DType        cache.DType // "" = U8
	Norm         string      // float dtypes: one of native.NormNames() ("" = clip); "none" for U8
	NoAutorotate bool        // do not apply the container's display rotation
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

	// What follows changes how a video is decoded or described, not an input's bytes.

	// Threads is the decoder's thread count (0: FFmpeg's default); frames are identical whatever it is.
	Threads int
	// HWAccel asks for hardware decoding ("", "none", "cuda", "vaapi", "auto"; decode falls back to the
	// CPU when the device cannot take the stream). Hardware frames are not FFmpeg's CPU frames bit for
	// bit, so Plan refuses it: only key-less readers (frames, probe, the benchmarks) take it.
	HWAccel string
	// FramesDetail makes a Source's Info carry every frame's pts and key flag (probe --frames-detail,
	// plan's keyframes).
	FramesDetail bool
}

// resolved is Options with defaults filled in and validated.
type resolved struct {
	Options
	norm native.Norm
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
	if r.DType == cache.U8 {
		r.Norm = "none"
		return r, nil
	}
	if r.Norm == "" {
		r.Norm = "clip"
	}
	n, err := native.LookupNorm(r.Norm)
	if err != nil {
		return r, fmt.Errorf("%w: %v (known: %s)", ErrOptions, err, strings.Join(native.NormNames(), ", "))
	}
	r.norm = n
	return r, nil
}

// keyable refuses what no cache key names (Plan's inputs are keyed; PlanFrames' are not).
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
