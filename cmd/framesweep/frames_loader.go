package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/loader/load"
	"github.com/framesweep/framesweep/pipeline"
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

// loaderFramesResult is what `frames --loader` prints: the loader's Result (its frames' positions,
// pts and sizes, counts, rate, fallbacks, notes) and the files written.
type loaderFramesResult struct {
	*load.Result
	Out string `json:"out"`
	// Written are the frames as the loader returns them, in its order: OUT/<position>.png.
	Written []string `json:"written"`
	// ResizedWritten (qwen-vl-utils loaders): fetch_video's resized frames, OUT/resized/<position>.png.
	ResizedWritten []string `json:"resized_written,omitempty"`
	// Others are the files --out held that this run did not write, kept under --force.
	Others []string `json:"others,omitempty"`
}

// runFramesLoader is `frames VIDEO --loader NAME …`: exactly the frames the loader's reader returns
// (before the model's processor), through the engine's source layer, as PNGs.
func runFramesLoader(video, dir string, force bool, l *loaderFlags, stdout, stderr io.Writer) int {
	const name = "frames"
	req, err := l.request()
	if err != nil {
		return usageErr(stderr, name, "%v", err)
	}
	res, errs, err := pipeline.RunLoader(context.Background(), pipeline.VideoRef{Path: video}, *l.name, []loader.Request{req}, load.Options{})
	if err == nil {
		err = errs[0]
	}
	if err != nil {
		return failErr(stderr, name, err)
	}
	r := res[0]
	out := loaderFramesResult{Result: r, Out: dir, Written: []string{}}
	d, err := openOut(dir)
	if err != nil {
		return failErr(stderr, name, err)
	}
	defer d.Close()
	var names []string
	for _, f := range r.Frames {
		names = append(names, fmt.Sprintf("%06d.png", f.Position))
		if f.Resized != nil {
			names = append(names, fmt.Sprintf("resized/%06d.png", f.Position))
		}
	}
	if err := d.claim(names, force); err != nil {
		return failErr(stderr, name, err)
	}
	out.Others = d.otherPaths()
	if r.ResizedW > 0 {
		if err := d.mkdir("resized"); err != nil {
			return failErr(stderr, name, err)
		}
	}
	for _, f := range r.Frames {
		file, err := d.writePNG(fmt.Sprintf("%06d.png", f.Position), f.Image)
		if err != nil {
			return loaderFramesFail(stdout, stderr, out, err)
		}
		out.Written = append(out.Written, file)
		if f.Resized != nil {
			if file, err = d.writePNG(fmt.Sprintf("resized/%06d.png", f.Position), f.Resized); err != nil {
				return loaderFramesFail(stdout, stderr, out, err)
			}
			out.ResizedWritten = append(out.ResizedWritten, file)
		}
	}
	if err := writeJSON(stdout, out); err != nil {
		return failErr(stderr, name, err)
	}
	return exitOK
}

// loaderFramesFail prints what was written before a write failed, then the one-line error.
func loaderFramesFail(stdout, stderr io.Writer, out loaderFramesResult, err error) int {
	if len(out.Written) > 0 {
		_ = writeJSON(stdout, out)
	}
	return failErr(stderr, "frames", err)
}
