package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/sampler"
)

// loaderFlags are the flags of a harness loader's request (docs/loaders.md): `frames --loader` takes
// them all, `plan --loader` the ones plan has not already (its --frames, --sample-fps, … are the
// same request fields).
type loaderFlags struct {
	name                     *string
	frames                   *int
	sampleFPS                *float64
	forceLast                *bool
	minF, maxF               *int
	torch                    *string
	patch                    *int
	minPix, maxPix, totalPix *float64
}

func addLoaderFlag(fs *flag.FlagSet) *string {
	return fs.String("loader", "", "a harness loader's frames (docs/loaders.md): "+strings.Join(loader.Names(), ", "))
}

// addPixelFlags are qwen-vl-utils' element keys.
func addPixelFlags(fs *flag.FlagSet, l *loaderFlags) {
	l.patch = fs.Int("image-patch-size", 0, "qwen-vl-utils loaders: image_patch_size (14, or 16 for Qwen3-VL)")
	l.minPix = fs.Float64("min-pixels", 0, "qwen-vl-utils loaders: min_pixels")
	l.maxPix = fs.Float64("max-pixels", 0, "qwen-vl-utils loaders: max_pixels")
	l.totalPix = fs.Float64("total-pixels", 0, "qwen-vl-utils loaders: total_pixels")
}

func addLoaderFlags(fs *flag.FlagSet) *loaderFlags {
	l := &loaderFlags{name: addLoaderFlag(fs),
		frames:    fs.Int("frames", 0, "with --loader: the frame budget (lmms-eval num_frm, qwen-vl-utils nframes, VLMEvalKit nframe)"),
		sampleFPS: fs.Float64("sample-fps", 0, "with --loader: the sampling rate (lmms-eval fps, qwen-vl-utils fps, VLMEvalKit fps)"),
		forceLast: fs.Bool("force-last", false, "lmms-eval loaders: force_include_last_frame"),
		minF:      fs.Int("min-frames", 0, "qwen-vl-utils loaders, fps mode: min_frames"),
		maxF:      fs.Int("max-frames", 0, "qwen-vl-utils loaders, fps mode: max_frames"),
		torch:     fs.String("torch", "", "qwen-vl-utils loaders: torch.linspace variant (2, 2-nofma, 1.13-avx2, 1.13-avx512)"),
	}
	addPixelFlags(fs, l)
	return l
}

// request is the loader request the flags make, checked against the loader (a usage error).
func (l *loaderFlags) request() (loader.Request, error) {
	r := loader.Request{Frames: *l.frames, SampleFPS: *l.sampleFPS, ForceLast: *l.forceLast, MinFrames: *l.minF,
		MaxFrames: *l.maxF, Torch: sampler.Torch(*l.torch), ImagePatchSize: *l.patch, MinPixels: *l.minPix,
		MaxPixels: *l.maxPix, TotalPixels: *l.totalPix}
	switch r.Torch {
	case "", sampler.Torch2, sampler.Torch2NoFMA, sampler.Torch113AVX2, sampler.Torch113AVX512:
	default:
		return r, fmt.Errorf("--torch %q: want 2, 2-nofma, 1.13-avx2 or 1.13-avx512", r.Torch)
	}
	if *l.name == loader.Framesweep {
		return r, errors.New("--loader framesweep is framesweep's own reading: give --indices (frames) or a --preset/--policy (plan)")
	}
	return r, loader.Check(*l.name, r)
}

// runFramesLoader is `frames VIDEO --loader NAME …`: exactly the frames the loader's reader returns
// (before the model's processor), through the engine's source layer, as PNGs.
func runFramesLoader(video string, out extract.Out, l *loaderFlags, stdout, stderr io.Writer) int {
	const name = "frames"
	req, err := l.request()
	if err != nil {
		return usageErr(stderr, name, "%v", err)
	}
	res, err := extract.LoaderFrames(context.Background(), video, *l.name, req, out)
	if err != nil {
		if res != nil && len(res.Written) > 0 {
			_ = writeJSON(stdout, res)
		}
		return failErr(stderr, name, err)
	}
	if err := writeJSON(stdout, res); err != nil {
		return failErr(stderr, name, err)
	}
	return exitOK
}
