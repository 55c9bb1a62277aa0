package sampler

import (
	"errors"
	"slices"
	"testing"
)

// Expected values were computed independently with exact rational rounding and numpy (SAMPLING.md §5).
func TestHarnessPresets(t *testing.T) {
	v1800 := Video{Frames: 1800, FPS: 30}
	v17 := Video{Frames: 17, FPS: 30}
	cases := []struct {
		name, preset string
		v            Video
		r            Request
		want         []int
		n            int
		err          error
	}{
		{name: "lmms simple qwen2.5: 2 fps grid then 32 of those", preset: "lmms-eval/qwen2.5-vl", v: v1800,
			want: []int{0, 45, 106, 166, 227, 287, 348, 393, 454, 514, 574, 635, 695, 741, 801, 862, 922, 983, 1043, 1088, 1149, 1209, 1270, 1330, 1391, 1436, 1497, 1557, 1618, 1678, 1739, 1799}},
		{name: "lmms simple qwen2.5 short video", preset: "lmms-eval/qwen2.5-vl", v: v17, want: []int{0, 5, 11, 16}},
		{name: "lmms simple qwen2.5 n=1 keeps first and last", preset: "lmms-eval/qwen2.5-vl", v: v1800, r: Request{Frames: 1}, want: []int{0, 1799}},
		{name: "lmms simple qwen2.5 fps unused", preset: "lmms-eval/qwen2.5-vl", v: v1800, r: Request{SampleFPS: 1}, err: ErrRequest},
		{name: "lmms chat qwen2.5 short video", preset: "lmms-eval/qwen2.5-vl-chat", v: v17,
			want: []int{0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16}},
		{name: "lmms chat qwen2.5 N=1", preset: "lmms-eval/qwen2.5-vl-chat", v: Video{Frames: 1, FPS: 30}, err: ErrBudget},
		{name: "lmms chat qwen2.5 fps", preset: "lmms-eval/qwen2.5-vl-chat", v: v1800, r: Request{SampleFPS: 0.5}, n: 30},
		{name: "lmms qwen3 short video raises", preset: "lmms-eval/qwen3-vl", v: v17, err: ErrBudget},
		{name: "lmms qwen3 default 32", preset: "lmms-eval/qwen3-vl", v: v1800, n: 32},
		{name: "lmms qwen3 fps capped by max_num_frames", preset: "lmms-eval/qwen3-vl", v: v1800, r: Request{SampleFPS: 1}, n: 32},
		{name: "vlmeval qwen2.5 nframe", preset: "vlmevalkit/qwen2.5-vl", v: v1800, r: Request{Frames: 16},
			want: []int{0, 120, 240, 360, 480, 600, 720, 840, 959, 1079, 1199, 1319, 1439, 1559, 1679, 1799}},
		{name: "vlmeval qwen2.5 fewer frames: N//2*2", preset: "vlmevalkit/qwen2.5-vl", v: Video{Frames: 5, FPS: 30}, want: []int{0, 1, 3, 4}},
		{name: "vlmeval qwen2.5 N=1", preset: "vlmevalkit/qwen2.5-vl", v: Video{Frames: 1, FPS: 30}, err: ErrBudget},
		{name: "vlmeval qwen3 fps", preset: "vlmevalkit/qwen3-vl", v: Video{Frames: 300, FPS: 30}, r: Request{SampleFPS: 2},
			want: []int{0, 16, 31, 47, 63, 79, 94, 110, 126, 142, 157, 173, 189, 205, 220, 236, 252, 268, 283, 299}},
		{name: "qwen3 videomme caps at 512", preset: "qwen3-vl/videomme", v: Video{Frames: 108000, FPS: 30}, n: 512},
		{name: "qwen3 videomme integer fps", preset: "qwen3-vl/videomme", v: v1800, r: Request{SampleFPS: 0.5}, err: ErrRequest},
		{name: "qwen3 videomme takes no frames", preset: "qwen3-vl/videomme", v: v1800, r: Request{Frames: 8}, err: ErrRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := LookupPreset(c.preset)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Select(c.v, c.r)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Preset != c.preset {
				t.Fatalf("preset %q", p.Preset)
			}
			if c.want != nil && !slices.Equal(p.Indices, c.want) {
				t.Fatalf("got %v\nwant %v", p.Indices, c.want)
			}
			if c.want == nil && len(p.Indices) != c.n {
				t.Fatalf("got %d frames", len(p.Indices))
			}
		})
	}
	p := mustPlan(t, "vlmevalkit/qwen3-vl", Video{Frames: 300, FPS: 30}, Request{SampleFPS: 2})
	if p.TimestampStrings[0] != "<0.3 seconds>" {
		t.Fatalf("%v", p.TimestampStrings)
	}
}

func TestClipRange(t *testing.T) {
	v := Video{Frames: 300, FPS: 30}
	// calculate_video_frame_range: frames 60…180 (121 frames) → fps mode n = 8.
	p := mustPlan(t, "qwen2.5-vl", v, Request{StartS: 2, EndS: 6})
	if !slices.Equal(p.Indices, []int{60, 77, 94, 111, 129, 146, 163, 180}) || p.TimestampsS[0] != 2 {
		t.Fatalf("%v", p.Indices)
	}
	// Only an end: from frame 0; an end past the video is clamped to the last frame.
	p = mustPlan(t, "qwen3-vl", v, Request{EndS: 100, Frames: 2})
	if !slices.Equal(p.Indices, []int{0, 299}) {
		t.Fatalf("%v", p.Indices)
	}
	// InternVL get_index with bound (1, 3): [30, 90], seg 15.
	p = mustPlan(t, "internvl3", v, Request{StartS: 1, EndS: 3, Frames: 4})
	if !slices.Equal(p.Indices, []int{37, 52, 67, 82}) {
		t.Fatalf("%v", p.Indices)
	}
	// A start one frame past the end still maps inside the video in get_index (frames 299, 298).
	p = mustPlan(t, "internvl3", v, Request{StartS: 10, Frames: 4})
	if !slices.Equal(p.Indices, []int{299, 299, 299, 298}) { // numpy: int(300 - 0.125 + np.round(-0.25·i))
		t.Fatalf("%v", p.Indices)
	}
	for _, c := range []struct {
		name string
		r    Request
		err  error
	}{
		{"qwen2.5-vl", Request{StartS: 5, EndS: 5}, ErrBudget},
		{"qwen2.5-vl", Request{StartS: 6, EndS: 2}, ErrRequest},
		{"qwen2.5-vl", Request{StartS: -1}, ErrRequest},
		{"internvl3", Request{StartS: 20, EndS: 30, Frames: 4}, ErrBudget}, // starts past the video: indices would be ≥ N
		{"internvl3", Request{StartS: 10.04, Frames: 4}, ErrBudget},        // start frame 301 = N+1
		{"internvl3", Request{StartS: 5, EndS: 2, Frames: 4}, ErrRequest},
		{"uniform", Request{StartS: 1, Frames: 4}, ErrRequest},
		{"lmms-eval", Request{EndS: 3}, ErrRequest},
	} {
		s, _ := Lookup(c.name)
		if _, err := s.Select(v, c.r); !errors.Is(err, c.err) {
			t.Fatalf("%s %+v: err = %v, want %v", c.name, c.r, err, c.err)
		}
	}
}
