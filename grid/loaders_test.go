package grid

import (
	"errors"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/sampler"
)

// TestLoaderGrid: a `loader:` grid expands budgets × resolutions into configs that carry the loader
// and its request (ids loader-<name>), plans nothing itself, and refuses what the loader decides.
func TestLoaderGrid(t *testing.T) {
	g, err := Parse([]byte("loader: qwen-vl-utils/decord\nframes: [8, 16]\nsample_fps: [2]\nresolutions: [\"224x224\"]\noptions: {min_frames: 4, torch: \"1.13-avx2\", image_patch_size: 16, max_pixels: 200704}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range g.Configs {
		ids = append(ids, c.ID)
		if c.Loader != "qwen-vl-utils/decord" || c.LoaderName() != c.Loader || c.LoaderOptions().ImagePatchSize != 16 || c.LoaderOptions().MaxPixels != 200704 || c.Request().Torch != sampler.Torch113AVX2 {
			t.Errorf("%s: %+v %+v %+v", c.ID, c, c.LoaderOptions(), c.Request())
		}
		if (c.Frames > 0) == (c.Request().MinFrames != 0) {
			t.Errorf("%s: min_frames %d (fps modes only)", c.ID, c.Request().MinFrames)
		}
		if _, err := c.Select(sampler.Video{Frames: 100, FPS: 25}); !errors.Is(err, ErrLoader) {
			t.Errorf("%s: Plan %v", c.ID, err)
		}
	}
	if want := "f8-loader-qwen-vl-utils_decord-224x224-raw f16-loader-qwen-vl-utils_decord-224x224-raw fps2-loader-qwen-vl-utils_decord-224x224-raw"; strings.Join(ids, " ") != want {
		t.Errorf("ids %v", ids)
	}
	// framesweep by name is the default: the same configs as no loader key.
	a, _ := Parse([]byte("frames: [8]\npresets: [lmms-eval]\n"))
	b, err := Parse([]byte("loader: framesweep\nframes: [8]\npresets: [lmms-eval]\n"))
	if err != nil || a.Configs[0].ID != b.Configs[0].ID || b.Configs[0].Loader != "" || b.Configs[0].LoaderName() != DefaultLoader {
		t.Fatalf("%v %+v", err, b.Configs)
	}
	// The names are package loader's: a grid takes each of them.
	for _, name := range loader.Names() {
		if name == DefaultLoader {
			continue // framesweep's own reading names presets or policies (above)
		}
		if _, err := Parse([]byte("loader: " + name + "\nframes: [8]\n")); err != nil {
			t.Errorf("loader %s: %v", name, err)
		}
	}
	for _, bad := range []string{
		"loader: nope\nframes: [8]\npresets: [lmms-eval]\n",
		"loader: lmms-eval\nframes: [8]\npresets: [lmms-eval]\n",
		"loader: lmms-eval\n",
		"loader: lmms-eval\nframes: [8]\npipelines: [cached]\n",
		"loader: lmms-eval\nframes: [8]\nstream: 0\n",
		"loader: lmms-eval\nframes: [8]\noptions: {image_patch_size: 16}\n",
		"loader: qwen-vl-utils\nframes: [8]\noptions: {image_patch_size: 15}\n",
		"loader: qwen-vl-utils\nframes: [8]\noptions: {image_patch_size: 14.5}\n",
		"loader: qwen-vl-utils\nframes: [8]\noptions: {force_last: true}\n",
		"loader: vlmevalkit\nframes: [8]\noptions: {torch: \"2\"}\n",
		"frames: [8]\npresets: [qwen3-vl]\noptions: {max_pixels: 1000}\n",
	} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrGrid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestOneLoader: serve's one-config loader requests get the id a loader grid would give.
func TestOneLoader(t *testing.T) {
	c, err := OneLoader("lmms-eval", sampler.Request{Frames: 8, ForceLast: true}, LoaderOptions{}, "64x48")
	g, gerr := Parse([]byte("loader: lmms-eval\nframes: [8]\nresolutions: [\"64x48\"]\noptions: {force_last: true}\n"))
	if err != nil || gerr != nil || c.ID != g.Configs[0].ID || c.Request() != g.Configs[0].Request() || c.Geometry() == nil {
		t.Fatalf("%v %v %+v %+v", err, gerr, c, g.Configs)
	}
	if d, err := OneLoader("qwen-vl-utils", sampler.Request{}, LoaderOptions{ImagePatchSize: 16}, ""); err != nil || d.ID != "default-loader-qwen-vl-utils-raw" {
		t.Fatalf("%v %+v", err, d)
	}
	for _, bad := range []struct {
		name string
		r    sampler.Request
		lo   LoaderOptions
	}{{"framesweep", sampler.Request{Frames: 8}, LoaderOptions{}}, {"nope", sampler.Request{}, LoaderOptions{}}, {"lmms-eval", sampler.Request{Seed: 3}, LoaderOptions{}},
		{"lmms-eval", sampler.Request{Frames: 8}, LoaderOptions{MinPixels: 4}}, {"vlmevalkit", sampler.Request{ForceSample: true}, LoaderOptions{}}} {
		if _, err := OneLoader(bad.name, bad.r, bad.lo, ""); !errors.Is(err, ErrGrid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
