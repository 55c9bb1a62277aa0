package load_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/loader/load"
	"github.com/framesweep/framesweep/resize"
)

// The decord- and torchcodec-based loaders have no oracle here (neither installs on Debian 12);
// these tests pin what they are written to do: their counts, streams, rotation and the JPEG step.
func TestIndexedLoaders(t *testing.T) {
	nasa := filepath.Join(repoRoot(), "testdata", "videos", "nasa_13013.mp4")
	ctx := context.Background()

	// VLMEvalKit: FFmpeg's best stream (3: 480x270, 390 frames at 30000/1001), interior points,
	// frames through a quality-75 JPEG round trip.
	res, err := Load(ctx, nasa, loader.VLMEvalKit, loader.Request{Frames: 8}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.StreamIndex != 3 || res.Count != 390 || fmt.Sprint(res.Positions()) != "[43 86 130 173 216 260 303 346]" || res.Width != 480 {
		t.Fatalf("vlmevalkit: stream %d count %d positions %v width %d", res.StreamIndex, res.Count, res.Positions(), res.Width)
	}
	v, err := decode.Open(nasa, decode.Options{Colour: decode.ColourFilterBilinear})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Read([]int{43}, func(f *decode.Frame) error {
		want, err := resize.JPEGRoundTrip(&f.Image, 75)
		if err != nil {
			return err
		}
		if !bytes.Equal(want.Pix, res.Frames[0].Image.Pix) {
			return errors.New("frame 43 is not the decoded frame after a q75 JPEG round trip")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if r2, err := Load(ctx, nasa, loader.VLMEvalKit, loader.Request{SampleFPS: 1}, load.Options{}); err != nil || len(r2.Frames) != 13 {
		t.Fatalf("vlmevalkit 1 fps on 13.0 s: %v %v", err, r2)
	}

	// decord rotates (video_90.mov is 568x320 coded, displayed 320x568); torchvision and PyAV do not.
	v90 := filepath.Join(repoRoot(), "testdata", "videos", "video_90.mov")
	d, err := Load(ctx, v90, loader.QwenVLUtilsDecord, loader.Request{Frames: 2}, load.Options{})
	if err != nil || d.Width != 320 || d.Height != 568 || d.ResizedW == 0 {
		t.Fatalf("qwen-vl-utils/decord on a rotated file: %v %+v", err, d)
	}
	p, err := Load(ctx, v90, loader.LmmsEval, loader.Request{Frames: 2}, load.Options{})
	if err != nil || p.Width != 568 || p.Height != 320 {
		t.Fatalf("lmms-eval on a rotated file: %v %+v", err, p)
	}

	// torchcodec: frames counted from the content, fps = frames / duration; lmms-eval's torchcodec
	// path samples at least one frame where the PyAV path falls back to every frame.
	tc, err := Load(ctx, nasa, loader.LmmsEvalTorchcodec, loader.Request{Frames: 32, SampleFPS: 0.05}, load.Options{})
	if err != nil || tc.Count != 390 || len(tc.Frames) != 1 {
		t.Fatalf("lmms-eval/torchcodec: %v %+v", err, tc)
	}
	pyav, err := Load(ctx, nasa, loader.LmmsEval, loader.Request{Frames: 32, SampleFPS: 0.05}, load.Options{})
	if err != nil || !pyav.AllFrames || len(pyav.Frames) != 325 || pyav.StreamIndex != 0 {
		t.Fatalf("lmms-eval (PyAV) with nothing sampled: %v %+v", err, pyav)
	}
	q, err := Load(ctx, nasa, loader.QwenVLUtilsTorchcode, loader.Request{Frames: 8}, load.Options{})
	if err != nil || q.Count != 390 || q.ResizedW != 476 || q.ResizedH != 280 {
		t.Fatalf("qwen-vl-utils/torchcodec: %v %+v", err, q)
	}

	// Limits: the every-frame path is bounded.
	if _, err := Load(ctx, nasa, loader.LmmsEval, loader.Request{Frames: 32, SampleFPS: 0.05}, load.Options{MaxFrames: 100}); !errors.Is(err, load.ErrTooMany) {
		t.Fatalf("MaxFrames 100 on an every-frame result: %v", err)
	}
}

// TestPlanOnly: the same positions, counts and sizes as a full Load, no pixels.
func TestPlanOnly(t *testing.T) {
	nasa := filepath.Join(repoRoot(), "testdata", "videos", "nasa_13013.mp4")
	for _, c := range []struct {
		name string
		r    loader.Request
	}{
		{loader.LmmsEval, loader.Request{Frames: 16}},
		{loader.LmmsEval, loader.Request{Frames: 32, SampleFPS: 0.05}},
		{loader.QwenVLUtils, loader.Request{Frames: 16}},
		{loader.VLMEvalKit, loader.Request{Frames: 8}},
		{loader.QwenVLUtilsDecord, loader.Request{Frames: 8}},
	} {
		full, err := Load(context.Background(), nasa, c.name, c.r, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := Load(context.Background(), nasa, c.name, c.r, load.Options{PlanOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(plan.Positions()) != fmt.Sprint(full.Positions()) || plan.Width != full.Width || plan.Height != full.Height ||
			plan.ResizedW != full.ResizedW || plan.Count != full.Count || plan.AllFrames != full.AllFrames {
			t.Errorf("%s %+v: plan-only %+v differs from %+v", c.name, c.r, plan, full)
		}
		for _, f := range plan.Frames {
			if f.Image != nil || f.Resized != nil {
				t.Fatalf("%s: plan-only frames carry pixels", c.name)
			}
		}
	}
}
