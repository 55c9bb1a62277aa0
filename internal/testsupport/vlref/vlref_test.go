package vlref

import (
	"fmt"
	"math"
	"testing"
)

// The reference reproduces the examples the upstream files give.

// TestRopeIndexDocstring: modeling_qwen2_5_vl.py's get_rope_index docstring — 3 temporal patches of
// 2×2 merged tokens, fps 1, tokens_per_second 25: temporal ids 0, 50, 100, heights 0 0 1 1, widths
// 0 1 0 1, text after the vision block from 101 (here shifted by the one <|vision_start|> before it).
func TestRopeIndexDocstring(t *testing.T) {
	seq := []Tok{VisionStart}
	for range 12 {
		seq = append(seq, Video)
	}
	for range 5 {
		seq = append(seq, Text)
	}
	pos, err := RopeIndex(Qwen25VL, seq, []Grid{{3, 4, 4}}, []float64{2.0 / 1}, 2, 25, false)
	if err != nil {
		t.Fatal(err)
	}
	var tt, hh, ww []int
	for _, p := range pos[1:13] {
		tt, hh, ww = append(tt, p[0]-1), append(hh, p[1]-1), append(ww, p[2]-1)
	}
	if fmt.Sprint(tt) != "[0 0 0 0 50 50 50 50 100 100 100 100]" || fmt.Sprint(hh) != "[0 0 1 1 0 0 1 1 0 0 1 1]" ||
		fmt.Sprint(ww) != "[0 1 0 1 0 1 0 1 0 1 0 1]" {
		t.Errorf("vision t %v h %v w %v", tt, hh, ww)
	}
	if pos[0] != [3]int{0, 0, 0} || pos[13] != [3]int{102, 102, 102} || pos[17] != [3]int{106, 106, 106} {
		t.Errorf("text positions %v … %v … %v", pos[0], pos[13], pos[17])
	}
}

// TestQwen3Timestamps: SAMPLING.md's worked example of Qwen3VLProcessor — 300 frames at 30 fps
// sampled at the default 2 fps (20 indices, np.linspace(0, 299, 20).round()) are written
// <0.3 seconds>, <1.3 seconds>, <2.4 seconds>, ….
func TestQwen3Timestamps(t *testing.T) {
	idx := make([]int, 20)
	for i := range idx {
		idx[i] = int(math.RoundToEven(float64(i) * 299 / 19))
	}
	ts := Qwen3Timestamps(idx, 30, 2)
	if len(ts) != 10 || ts[0] != "<0.3 seconds>" || ts[1] != "<1.3 seconds>" || ts[2] != "<2.4 seconds>" {
		t.Errorf("%v", ts)
	}
	// An odd count repeats the last index: the last group is that frame alone.
	if got := Qwen3Timestamps([]int{0, 30, 60}, 30, 2); fmt.Sprint(got) != "[<0.5 seconds> <2.0 seconds>]" {
		t.Errorf("odd: %v", got)
	}
}

// TestVideoGrid: the processor pads an odd frame count with the last frame; 16 and 15 frames both
// make 8 temporal patches; a size off the patch × merge grid is refused (the processor's view() fails).
func TestVideoGrid(t *testing.T) {
	for _, n := range []int{15, 16} {
		g, err := VideoGrid(n, 84, 112, 14, 2, 2)
		if err != nil || g != (Grid{8, 6, 8}) || g.Tokens(2) != 96 {
			t.Errorf("%d frames: %+v %v", n, g, err)
		}
	}
	if _, err := VideoGrid(4, 84, 100, 14, 2, 2); err == nil {
		t.Error("100 px wide: no error")
	}
}

// TestSecondPerGridCast: transformers versions that cast second_per_grid_t to int64 first give
// other temporal ids for a fractional interval: 16 frames drawn from 300 at 30 fps (1.6 fps,
// 1.25 s per grid) — 0 2 5 7 … as Qwen's and vLLM's float product, 0 2 4 6 … with the cast.
func TestSecondPerGridCast(t *testing.T) {
	spg := 2 / SampleFPS(16, 300, 30)
	seq := []Tok{VisionStart}
	for range 8 {
		seq = append(seq, Video)
	}
	for _, c := range []struct {
		cast bool
		want string
	}{{false, "[0 2 5 7 10 12 15 17]"}, {true, "[0 2 4 6 8 10 12 14]"}} {
		pos, err := RopeIndex(Qwen25VL, seq, []Grid{{8, 2, 2}}, []float64{spg}, 2, 2, c.cast)
		if err != nil {
			t.Fatal(err)
		}
		var tt []int
		for _, p := range pos[1:] {
			tt = append(tt, p[0]-1)
		}
		if fmt.Sprint(tt) != c.want {
			t.Errorf("cast %v: %v, want %s", c.cast, tt, c.want)
		}
	}
}

// TestInternVLVideoQuery: the MPT prompt of template internvl2_5 is chatml turns after the system
// turn, and each <image> becomes one <img>…</img> block of num_image_token × num_patches contexts, in
// frame order after lmms-eval's "Frame{i}: " lines.
func TestInternVLVideoQuery(t *testing.T) {
	got := InternVLVideoQuery("SYS", "Q?", []int{5, 1}, 2, "#")
	want := "<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\n" +
		"Frame1: <img>##########</img>\nFrame2: <img>##</img>\nQ?<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Errorf("query\n%q\nwant\n%q", got, want)
	}
}
