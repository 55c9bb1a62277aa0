package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/piloracle"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
)

func readPNG(t *testing.T, path string) *rgb.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return piloracle.FromImage(im)
}

func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	rc := dispatch(args, &out, &errb)
	return rc, out.String(), errb.String()
}

// TestFramesSizeMatchesPillow: `frames --size` with the default kernel writes exactly what Pillow's
// Image.resize makes of the source-size frame the same command writes without --size.
func TestFramesSizeMatchesPillow(t *testing.T) {
	resizeTestVideo := testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
	dir := t.TempDir()
	full, small := filepath.Join(dir, "full"), filepath.Join(dir, "small")
	if rc, _, e := runCLI("frames", resizeTestVideo, "--indices", "7", "--out", full); rc != 0 {
		t.Fatalf("frames: rc %d: %s", rc, e)
	}
	if rc, _, e := runCLI("frames", resizeTestVideo, "--indices", "7", "--out", small, "--size", "224x160"); rc != 0 {
		t.Fatalf("frames --size: rc %d: %s", rc, e)
	}
	got := readPNG(t, filepath.Join(small, "000007.png"))
	if got.W != 224 || got.H != 160 {
		t.Fatalf("got %dx%d, want 224x160", got.W, got.H)
	}
	testenv.NeedPython(t, "PIL")
	src := readPNG(t, filepath.Join(full, "000007.png"))
	want, err := piloracle.Resize(dir, []piloracle.Case{{Src: src, OutW: 224, OutH: 160, Filter: "bicubic"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Pix, want[0].Pix) {
		t.Error("frames --size 224x160 differs from Pillow's resize of the source-size frame")
	}
}

func TestFramesPresetAndKernel(t *testing.T) {
	resizeTestVideo := testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
	dir := t.TempDir()
	// llava-next-video: shortest edge 336 then a 336x336 centre crop.
	if rc, _, e := runCLI("frames", resizeTestVideo, "--indices", "2", "--out", dir, "--preset", "llava-next-video", "--kernel", "cv-area"); rc != 0 {
		t.Fatalf("rc %d: %s", rc, e)
	}
	if m := readPNG(t, filepath.Join(dir, "000002.png")); m.W != 336 || m.H != 336 {
		t.Errorf("llava-next-video gave %dx%d, want 336x336", m.W, m.H)
	}
}

// TestFramesPresetTiles: a tiled preset (lmms-eval's InternVL3) writes what the model receives, tiles in
// row-major order then the thumbnail (000004_00.png …), equal to the engine's own layout.
func TestFramesPresetTiles(t *testing.T) {
	video := filepath.Join("..", "..", "testdata", "videos", "nasa_13013.mp4")
	dir := t.TempDir()
	if rc, _, e := runCLI("frames", video, "--indices", "4", "--out", dir, "--preset", "lmms-eval/internvl3"); rc != 0 {
		t.Fatalf("rc %d: %s", rc, e)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "000004_*.png"))
	g, err := geom.ForPreset("lmms-eval/internvl3") // one frame: up to 12 tiles + thumbnail
	if err != nil {
		t.Fatal(err)
	}
	d, err := decode.Open(video, decode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var want []*rgb.Image
	if _, err := d.Read([]int{4}, func(f *decode.Frame) error {
		l, err := g.Layout(f.W, f.H, 1)
		if err == nil {
			want, err = resize.ApplyLayout(resize.DefaultKernel, l, &f.Image)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(want) < 2 || len(files) != len(want) {
		t.Fatalf("%d files written, the layout has %d images", len(files), len(want))
	}
	for i, f := range files {
		if got := readPNG(t, f); !bytes.Equal(got.Pix, want[i].Pix) {
			t.Errorf("%s differs from image %d of the layout", f, i)
		}
	}
}
