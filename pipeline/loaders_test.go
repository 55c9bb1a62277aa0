package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/internal/engine/worker"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/loader/load"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
)

// buildAll plans configs for v and builds every job into memory, by key.
func buildAll(t *testing.T, v Video, src Source, g string, o Options) (map[string]*Object, []*Job) {
	t.Helper()
	jobs, fails, err := PlanJobs(v, testGrid(t, g).Configs, o)
	if err != nil || len(fails) > 0 {
		t.Fatalf("plan: %v %v", err, fails)
	}
	objs := map[string]*Object{}
	_, jerrs, err := Run(context.Background(), v, src, jobs, &MemorySink{Done: func(ob *Object) error { objs[ob.Result.Job.Key] = ob; return nil }})
	if err != nil || len(jerrs) > 0 || len(objs) != len(jobs) {
		t.Fatalf("run: %v %v, %d objects of %d jobs", err, jerrs, len(objs), len(jobs))
	}
	return objs, jobs
}

func packed(imgs []*rgb.Image) []byte {
	var b []byte
	for _, m := range imgs {
		b = append(b, m.Packed()...)
	}
	return b
}

// TestLoaderGridThroughEngine: a `loader:` grid's configs are planned by the loader's reader and
// built by running it again; each object's frames tensor is exactly what RunLoader returns for the
// same request (lmms-eval: its frames; qwen-vl-utils: fetch_video's resized frames), its indices
// are the reader's positions, and its metadata names the loader, its request and the stream its
// reader chose. On nasa_13013.mp4 (two video streams) that is stream 0, where framesweep reads 3.
func TestLoaderGridThroughEngine(t *testing.T) {
	v, src := openTest(t, "nasa_13013.mp4", Options{})
	ctx := context.Background()
	for _, c := range []struct {
		grid string
		name string
		reqs []loader.Request
	}{
		{"loader: lmms-eval\nframes: [4, 8]\n", loader.LmmsEval, []loader.Request{{Frames: 4}, {Frames: 8}}},
		{"loader: qwen-vl-utils\nframes: [4]\nsample_fps: [1]\noptions: {torch: \"1.13-avx2\"}\n", loader.QwenVLUtils,
			[]loader.Request{{Frames: 4, Torch: "1.13-avx2"}, {SampleFPS: 1, Torch: "1.13-avx2"}}},
	} {
		objs, jobs := buildAll(t, v, src, c.grid, Options{})
		want, errs, err := RunLoader(ctx, VideoRef{Path: v.Path}, c.name, c.reqs, load.Options{})
		if err != nil || errors.Join(errs...) != nil {
			t.Fatal(err, errs)
		}
		if len(jobs) != len(c.reqs) {
			t.Fatalf("%s: %d jobs", c.name, len(jobs))
		}
		for i, j := range jobs {
			ob, w := objs[j.Key], want[i]
			var imgs []*rgb.Image
			for _, f := range w.Frames {
				if f.Resized != nil {
					imgs = append(imgs, f.Resized)
				} else {
					imgs = append(imgs, f.Image)
				}
			}
			m := ob.Result.Job
			meta := ObjectMetadata(ob.Result)
			var req loader.Request
			if err := json.Unmarshal([]byte(meta["loader_request"]), &req); err != nil {
				t.Fatalf("%s %s: loader_request %q: %v", c.name, j.Config.ID, meta["loader_request"], err)
			}
			switch {
			case !bytes.Equal(ob.Data, packed(imgs)):
				t.Errorf("%s %s: the object's frames are not the loader's", c.name, j.Config.ID)
			case !slices.Equal(m.Selection.Indices, w.Positions()) || j.LoaderName() != c.name || j.Config.Loader != c.name:
				t.Errorf("%s: indices %v, loader positions %v (%s)", j.Config.ID, m.Selection.Indices, w.Positions(), j.LoaderName())
			case meta["loader"] != c.name || req != c.reqs[i] || meta["stream_index"] != "0" || j.Spec.Stream != 0 || meta["sampler"] != c.name:
				t.Errorf("%s: metadata loader %q request %q stream %q sampler %q", j.Config.ID, meta["loader"], meta["loader_request"], meta["stream_index"], meta["sampler"])
			case !strings.Contains(string(j.Spec.Canonical()), `"loader":"`+c.name+`"`):
				t.Errorf("%s: the key does not name the loader: %s", j.Config.ID, j.Spec.Canonical())
			}
		}
	}
	if v.Info.StreamIndex != 3 {
		t.Fatalf("framesweep's own stream is %d, the test expects the best stream 3", v.Info.StreamIndex)
	}
}

// TestLoaderGeometryAndDType: a loader config's resolution and the engine's float options apply to
// the loader's frames as to decoded ones: the tensor is ImagesTensor of the loader's frames.
func TestLoaderGeometryAndDType(t *testing.T) {
	v, src := openTest(t, "video_90.mov", Options{})
	o := Options{DType: cache.F32, Norm: "imagenet", Kernel: "cv-area"}
	objs, jobs := buildAll(t, v, src, "loader: lmms-eval\nframes: [2]\nresolutions: [\"short:48+crop:40\"]\n", o)
	res, errs, err := RunLoader(context.Background(), VideoRef{Path: v.Path}, loader.LmmsEval, []loader.Request{{Frames: 2}}, load.Options{})
	if err != nil || errs[0] != nil {
		t.Fatal(err, errs)
	}
	var imgs []*rgb.Image
	for _, f := range res[0].Frames {
		imgs = append(imgs, f.Image)
	}
	g, _ := geom.Parse("short:48+crop:40")
	want, shape, err := ImagesTensor(imgs, g, o)
	if err != nil {
		t.Fatal(err)
	}
	ob := objs[jobs[0].Key]
	meta := ObjectMetadata(ob.Result)
	// PyAV does not rotate: lmms-eval's frames of this rotated clip are 568x320 as coded.
	if !bytes.Equal(ob.Data, want) || fmt.Sprint(jobs[0].Shape()) != fmt.Sprint(shape) || res[0].Width != 568 || meta["rotation_applied"] != "false" {
		t.Fatalf("shape %v vs %v, %dx%d, rotation_applied %s, equal %v", jobs[0].Shape(), shape, res[0].Width, res[0].Height, meta["rotation_applied"], bytes.Equal(ob.Data, want))
	}
}

// TestLoaderKeys: a loader's key differs from the preset of the same name (other stream, colours,
// rotation), from another request with the same positions (qwen-vl-utils' image_patch_size changes
// only the resize), and framesweep's own keys do not mention loaders.
func TestLoaderKeys(t *testing.T) {
	v, _ := openTest(t, "nasa_13013.mp4", Options{})
	plan := func(g string) *Job {
		jobs, fails, err := PlanJobs(v, testGrid(t, g).Configs, Options{})
		if err != nil || len(fails) > 0 || len(jobs) != 1 {
			t.Fatalf("%s: %v %v %d jobs", g, err, fails, len(jobs))
		}
		return jobs[0]
	}
	preset := plan("presets: [lmms-eval]\nframes: [8]\n")
	same := plan("loader: framesweep\npresets: [lmms-eval]\nframes: [8]\n")
	lm := plan("loader: lmms-eval\nframes: [8]\n")
	q14 := plan("loader: qwen-vl-utils\nframes: [8]\n")
	q16 := plan("loader: qwen-vl-utils\nframes: [8]\noptions: {image_patch_size: 16}\n")
	switch {
	case preset.Key != same.Key || strings.Contains(string(preset.Spec.Canonical()), "loader") || preset.Loader != nil:
		t.Errorf("framesweep's own key changed: %s", preset.Spec.Canonical())
	case lm.Key == preset.Key || q14.Key == q16.Key:
		t.Errorf("keys collide: %s %s %s %s", lm.Key, preset.Key, q14.Key, q16.Key)
	case !slices.Equal(q14.Selection.Indices, q16.Selection.Indices) || q14.Width == q16.Width:
		t.Errorf("image_patch_size: indices %v %v, widths %d %d", q14.Selection.Indices, q16.Selection.Indices, q14.Width, q16.Width)
	}
}

// TestLoaderRefusals: options a loader decides itself, or a worker (loaders decode in process), are
// ErrOptions; a request its reader raises on is a Failure naming the video and the config.
func TestLoaderRefusals(t *testing.T) {
	v, _ := openTest(t, "video_90.mov", Options{})
	g := testGrid(t, "loader: qwen-vl-utils\nframes: [2, 8]\n")
	for _, o := range []Options{{Worker: &worker.Limits{}}, {Stream: new(int)}, {NoAutorotate: true}, {Pipelines: []string{"cached"}}} {
		if _, _, err := PlanJobs(v, g.Configs, o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	jobs, fails, err := PlanJobs(v, g.Configs, Options{})
	if err != nil || len(jobs) != 1 || len(fails) != 1 || !errors.Is(fails[0].Err, loader.ErrUpstream) ||
		!strings.HasPrefix(fails[0].Error(), v.Path+": config f8-loader-qwen-vl-utils-raw: qwen-vl-utils: ") {
		t.Fatalf("%v %d jobs %v", err, len(jobs), fails)
	}
}
