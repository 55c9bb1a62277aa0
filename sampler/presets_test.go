package sampler

import (
	"errors"
	"slices"
	"testing"
)

func mustPlan(t *testing.T, name string, v Video, r Request) Selection {
	t.Helper()
	s, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Select(v, r)
	if err != nil {
		t.Fatalf("%s %+v %+v: %v", name, v, r, err)
	}
	return p
}

func seq(lo, hi int) []int { // [lo, hi)
	var out []int
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// The worked examples and edge cases of SAMPLING.md, one row per case.
func TestPresetTable(t *testing.T) {
	v300 := Video{Frames: 300, FPS: 30}
	v17 := Video{Frames: 17, FPS: 30}
	v1800 := Video{Frames: 1800, FPS: 30}
	v1 := Video{Frames: 1, FPS: 30}
	cases := []struct {
		name   string
		preset string
		v      Video
		r      Request
		want   []int
		prefix bool  // want is a prefix of the result
		n      int   // expected length when want is nil
		err    error // expected sentinel
	}{
		// qwen-vl-utils smart_nframes + torch.linspace().round()
		{name: "qwen 300f@30 default fps=2", preset: "qwen2.5-vl", v: v300,
			want: []int{0, 16, 31, 47, 63, 79, 94, 110, 126, 142, 157, 173, 189, 205, 220, 236, 252, 268, 283, 299}},
		{name: "qwen nframes 9 rounds to 8", preset: "qwen2.5-vl", v: v300, r: Request{Frames: 9}, n: 8},
		{name: "qwen nframes 11 rounds to 12", preset: "qwen2.5-vl", v: v300, r: Request{Frames: 11}, n: 12},
		{name: "qwen 1800f n=16", preset: "qwen2.5-vl", v: v1800, r: Request{Frames: 16},
			want: []int{0, 120, 240, 360, 480, 600, 720, 840, 959, 1079, 1199, 1319, 1439, 1559, 1679, 1799}},
		{name: "qwen N<n nframes raises", preset: "qwen2.5-vl", v: v17, r: Request{Frames: 32}, err: ErrBudget},
		{name: "qwen short video fps mode gets min 4", preset: "qwen2.5-vl", v: v17, want: []int{0, 5, 11, 16}},
		{name: "qwen n=1 rounds to 0 and raises", preset: "qwen2.5-vl", v: v300, r: Request{Frames: 1}, err: ErrBudget},
		{name: "qwen N=1 raises", preset: "qwen2.5-vl", v: v1, err: ErrBudget},
		{name: "qwen fps and nframes", preset: "qwen2.5-vl", v: v300, r: Request{Frames: 8, SampleFPS: 1}, err: ErrRequest},
		{name: "qwen fps 0.5 min 4", preset: "qwen2.5-vl", v: v300, r: Request{SampleFPS: 0.5}, want: []int{0, 100, 199, 299}},
		{name: "qwen max_frames clamp even", preset: "qwen2.5-vl", v: v1800, r: Request{MaxFrames: 7}, n: 6},
		{name: "qwen3 same sampler", preset: "qwen3-vl", v: v1800, r: Request{Frames: 16},
			want: []int{0, 120, 240, 360, 480, 600, 720, 840, 959, 1079, 1199, 1319, 1439, 1559, 1679, 1799}},
		{name: "qwen3 N<n", preset: "qwen3-vl", v: v17, r: Request{Frames: 32}, err: ErrBudget},
		// HF Qwen3VLVideoProcessor: n not even, float64 round
		{name: "qwen3-hf num_frames odd", preset: "qwen3-vl-hf", v: v300, r: Request{Frames: 3}, want: []int{0, 150, 299}},
		{name: "qwen3-hf N<n repeats", preset: "qwen3-vl-hf", v: Video{Frames: 3, FPS: 30}, r: Request{Frames: 5}, want: []int{0, 0, 1, 2, 2}},
		{name: "qwen3-hf fps clamps to N", preset: "qwen3-vl-hf", v: Video{Frames: 3, FPS: 30}, want: []int{0, 1, 2}},
		// InternVL get_index
		{name: "internvl 17f 32 segments", preset: "internvl3", v: v17, r: Request{Frames: 32},
			want: []int{0, 0, 1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 6, 6, 7, 8, 8, 8, 9, 10, 10, 10, 11, 12, 12, 12, 13, 14, 14, 14, 15, 16}},
		{name: "internvl n=1 middle", preset: "internvl3", v: v300, r: Request{Frames: 1}, want: []int{149}},
		{name: "internvl N=1", preset: "internvl3", v: v1, r: Request{Frames: 4}, want: []int{0, 0, 0, 0}},
		{name: "internvl default 32", preset: "internvl3", v: v1800, n: 32},
		// lmms-eval read_video
		{name: "lmms 1800f n=16", preset: "lmms-eval", v: v1800, r: Request{Frames: 16},
			want: []int{0, 119, 239, 359, 479, 599, 719, 839, 959, 1079, 1199, 1319, 1439, 1559, 1679, 1799}},
		{name: "lmms N<n collapses", preset: "lmms-eval", v: v17, r: Request{Frames: 32}, want: seq(0, 17)},
		{name: "lmms fps cap", preset: "lmms-eval", v: v300, r: Request{Frames: 32, SampleFPS: 0.5}, want: []int{0, 74, 149, 224, 299}},
		{name: "lmms fps cap to zero returns all frames", preset: "lmms-eval", v: v17, r: Request{SampleFPS: 1}, want: seq(0, 17)},
		{name: "lmms force last", preset: "lmms-eval", v: Video{Frames: 10, FPS: 1}, r: Request{Frames: 4, ForceLast: true}, want: []int{0, 3, 6, 9}},
		{name: "lmms n=1 force last", preset: "lmms-eval", v: v300, r: Request{Frames: 1, ForceLast: true}, want: []int{299}},
		{name: "lmms N=1", preset: "lmms-eval", v: v1, r: Request{Frames: 8}, want: []int{0}},
		// llava
		{name: "onevision N<n duplicates", preset: "llava-onevision", v: Video{Frames: 3, FPS: 30}, r: Request{Frames: 5}, want: []int{0, 0, 1, 1, 2}},
		{name: "onevision n=1", preset: "llava-onevision", v: v300, r: Request{Frames: 1}, want: []int{0}},
		{name: "llava-video short keeps stride grid", preset: "llava-video", v: v17, r: Request{Frames: 32}, want: []int{0}},
		{name: "llava-video over budget uses linspace", preset: "llava-video", v: v1800, r: Request{Frames: 4}, want: []int{0, 599, 1199, 1799}},
		{name: "llava-video force sample", preset: "llava-video", v: v300, r: Request{Frames: 3, ForceSample: true}, want: []int{0, 149, 299}},
		{name: "llava-video stride 0", preset: "llava-video", v: Video{Frames: 100, FPS: 1}, r: Request{SampleFPS: 5}, err: ErrRequest},
		// VLMEvalKit
		{name: "vlmeval 17f fps=1 is empty", preset: "vlmevalkit", v: v17, r: Request{SampleFPS: 1}, want: []int{}},
		{name: "vlmeval 1800f n=16", preset: "vlmevalkit", v: v1800, r: Request{Frames: 16},
			want: []int{105, 211, 317, 423, 529, 635, 741, 847, 952, 1058, 1164, 1270, 1376, 1482, 1588, 1694}},
		{name: "vlmeval fps=1", preset: "vlmevalkit", v: v300, r: Request{SampleFPS: 1}, want: []int{0, 30, 60, 90, 120, 150, 180, 210, 240, 270}},
		{name: "vlmeval N<n duplicates", preset: "vlmevalkit", v: Video{Frames: 3, FPS: 30}, r: Request{Frames: 4}, want: []int{0, 1, 1, 2}},
		{name: "vlmeval default 8", preset: "vlmevalkit", v: v1800, n: 8},
		{name: "vlmeval both", preset: "vlmevalkit", v: v300, r: Request{Frames: 4, SampleFPS: 1}, err: ErrRequest},
		// Video-MME slicer
		{name: "videomme 1800f n=16", preset: "videomme", v: v1800, r: Request{Frames: 16},
			want: []int{56, 168, 281, 393, 506, 618, 731, 843, 956, 1068, 1180, 1293, 1405, 1518, 1630, 1743}},
		{name: "videomme needs frames", preset: "videomme", v: v1800, err: ErrRequest},
		{name: "videomme N=1", preset: "videomme", v: v1, r: Request{Frames: 2}, want: []int{0, 0}},
		// bad videos
		{name: "zero frames", preset: "internvl3", v: Video{FPS: 30}, err: ErrVideo},
		{name: "zero fps", preset: "lmms-eval", v: Video{Frames: 10}, err: ErrVideo},
		{name: "bad torch", preset: "qwen2.5-vl", v: v300, r: Request{Torch: "3"}, err: ErrRequest},
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
				var e *Error
				if !errors.As(err, &e) || e.Op != c.preset {
					t.Fatalf("err %v is not an *Error naming %s", err, c.preset)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Preset != c.preset || len(p.TimestampsS) != len(p.Indices) {
				t.Fatalf("plan %+v", p)
			}
			got := p.Indices
			switch {
			case c.want != nil && c.prefix:
				if len(got) < len(c.want) || !slices.Equal(got[:len(c.want)], c.want) {
					t.Fatalf("got %v, want prefix %v", got, c.want)
				}
			case c.want != nil:
				if !slices.Equal(got, c.want) {
					t.Fatalf("got %v\nwant %v", got, c.want)
				}
			default:
				if len(got) != c.n {
					t.Fatalf("got %d indices %v, want %d", len(got), got, c.n)
				}
			}
			for i, x := range got {
				if x < 0 || x >= c.v.Frames {
					t.Fatalf("index %d = %d out of [0, %d)", i, x, c.v.Frames)
				}
				if p.TimestampsS[i] != float64(x)/c.v.FPS {
					t.Fatalf("timestamp %d = %v", i, p.TimestampsS[i])
				}
			}
		})
	}
}

// SAMPLING.md §2: 300 frames at 30 fps, default fps=2 → "<0.3 seconds>", "<1.3 seconds>", "<2.4 seconds>", …
func TestQwen3TimestampStrings(t *testing.T) {
	p := mustPlan(t, "qwen3-vl", Video{Frames: 300, FPS: 30}, Request{})
	want := []string{"<0.3 seconds>", "<1.3 seconds>", "<2.4 seconds>", "<3.4 seconds>"}
	if len(p.TimestampStrings) != 10 || !slices.Equal(p.TimestampStrings[:4], want) {
		t.Fatalf("got %v", p.TimestampStrings)
	}
	// Odd counts (HF processor path) pad by repeating the last index.
	if got := qwen3Timestamps([]int{0, 30, 60}, 30); !slices.Equal(got, []string{"<0.5 seconds>", "<2.0 seconds>"}) {
		t.Fatalf("odd padding: %v", got)
	}
}

func TestLlavaVideoTimeStrings(t *testing.T) {
	// 25 fps, video_fps 1: stride 25, frame_time = i/25 → exact seconds.
	p := mustPlan(t, "llava-video", Video{Frames: 100, FPS: 25}, Request{})
	if !slices.Equal(p.TimestampStrings, []string{"0.00s", "1.00s", "2.00s", "3.00s"}) {
		t.Fatalf("got %v", p.TimestampStrings)
	}
	// 29.97 fps: stride round(29.97) = 30 and frame_time divides by 30, not 29.97 (upstream quirk).
	p = mustPlan(t, "llava-video", Video{Frames: 61, FPS: 29.97}, Request{})
	if !slices.Equal(p.Indices, []int{0, 30, 60}) || !slices.Equal(p.TimestampStrings, []string{"0.00s", "1.00s", "2.00s"}) || len(p.Notes) == 0 {
		t.Fatalf("got %v %v %v", p.Indices, p.TimestampStrings, p.Notes)
	}
	// Over budget: linspace and i/avg_fps.
	p = mustPlan(t, "llava-video", Video{Frames: 1800, FPS: 30}, Request{Frames: 2})
	if !slices.Equal(p.TimestampStrings, []string{"0.00s", "59.97s"}) {
		t.Fatalf("got %v", p.TimestampStrings)
	}
}

// Issue 3: for an 1800-frame video qwen and lmms-eval disagree on 7 of 16 indices, and VLMEvalKit
// shares none with qwen.
func TestFrameworksDisagree(t *testing.T) {
	v := Video{Frames: 1800, FPS: 30}
	q := mustPlan(t, "qwen2.5-vl", v, Request{Frames: 16})
	l := mustPlan(t, "lmms-eval", v, Request{Frames: 16})
	k := mustPlan(t, "vlmevalkit", v, Request{Frames: 16})
	diff := 0
	for i := range q.Indices {
		if q.Indices[i] != l.Indices[i] {
			diff++
		}
	}
	if diff != 7 {
		t.Fatalf("qwen vs lmms-eval differ at %d positions, want 7", diff)
	}
	if u := Union(q, k); u.Shared != 0 {
		t.Fatalf("qwen and vlmevalkit share %d frames", u.Shared)
	}
}

// A 1-hour 30 fps video at n = 768: both endpoints, 768 increasing indices, and the torch builds
// disagree on at most a couple of indices by one frame (SAMPLING.md §1).
func TestQwenOneHour768(t *testing.T) {
	v := Video{Frames: 108000, FPS: 30}
	ref := mustPlan(t, "qwen2.5-vl", v, Request{Frames: 768})
	if len(ref.Indices) != 768 || ref.Indices[0] != 0 || ref.Indices[767] != 107999 {
		t.Fatalf("bad plan: len %d", len(ref.Indices))
	}
	for i := 1; i < 768; i++ {
		if ref.Indices[i] <= ref.Indices[i-1] {
			t.Fatalf("not increasing at %d", i)
		}
	}
	// fps mode on the same video caps at 768 as well.
	if p := mustPlan(t, "qwen2.5-vl", v, Request{}); len(p.Indices) != 768 {
		t.Fatalf("fps mode gave %d frames", len(p.Indices))
	}
	exact := exactRound(108000, 768)
	// The counts docs/sampler.md quotes ("float32 kernel differences").
	wantDiff := map[Torch]int{Torch2: 2, Torch2NoFMA: 3, Torch113AVX2: 2, Torch113AVX512: 3}
	for _, tv := range []Torch{Torch2, Torch2NoFMA, Torch113AVX2, Torch113AVX512} {
		p := mustPlan(t, "qwen2.5-vl", v, Request{Frames: 768, Torch: tv})
		d := 0
		for i := range exact {
			if dd := p.Indices[i] - exact[i]; dd != 0 {
				if dd > 1 || dd < -1 {
					t.Fatalf("%s: index %d off by %d", tv, i, dd)
				}
				d++
			}
		}
		if d != wantDiff[tv] {
			t.Fatalf("%s differs from exact rounding at %d indices, docs/sampler.md says %d", tv, d, wantDiff[tv])
		}
		t.Logf("torch %s: %d of 768 indices differ from exact rational rounding", tv, d)
	}
}

func TestUnknownNames(t *testing.T) {
	for _, f := range []func(string) (Sampler, error){Lookup, LookupPreset, LookupPolicy} {
		if _, err := f("qwen9"); !errors.Is(err, ErrUnknown) {
			t.Fatalf("err = %v", err)
		}
	}
	if _, err := LookupPreset("uniform"); !errors.Is(err, ErrUnknown) {
		t.Fatal("a policy is not a preset")
	}
	if _, err := LookupPolicy("qwen2.5-vl"); !errors.Is(err, ErrUnknown) {
		t.Fatal("a preset is not a policy")
	}
	for _, want := range []string{"qwen2.5-vl", "qwen3-vl", "internvl3", "llava-onevision", "llava-video", "lmms-eval", "vlmevalkit", "videomme"} {
		s, err := LookupPreset(want)
		if err != nil {
			t.Fatal(err)
		}
		if s.(*sampler).upstream == "" {
			t.Fatalf("%s names no upstream source", want)
		}
	}
}

// Counts beyond MaxFrames are errors, not multi-gigabyte allocations (`plan --frames 3000000000`
// used to die with "fatal error: out of memory").
func TestHugeCountsAreErrors(t *testing.T) {
	v := Video{Frames: 100, FPS: 30}
	for _, c := range []struct {
		name string
		v    Video
		r    Request
		err  error
	}{
		{"llava-onevision", v, Request{Frames: 3_000_000_000}, ErrRequest},
		{"random-iid", v, Request{Frames: MaxFrames + 1}, ErrRequest},
		{"qwen3-vl-hf", v, Request{Frames: MaxFrames + 1}, ErrRequest},
		{"fps", v, Request{SampleFPS: 1, MinFrames: MaxFrames + 1}, ErrRequest},
		{"uniform-left", Video{Frames: 1 << 40, FPS: 30}, Request{Frames: 8}, ErrVideo},
		{"vlmevalkit", Video{Frames: MaxFrames, FPS: 1}, Request{SampleFPS: 1000}, ErrBudget},
	} {
		s, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Select(c.v, c.r); !errors.Is(err, c.err) {
			t.Errorf("%s %+v: err = %v, want %v", c.name, c.r, err, c.err)
		}
	}
	// The limits themselves are accepted.
	if p := mustPlan(t, "uniform-left", Video{Frames: MaxFrames, FPS: 30}, Request{Frames: 4}); p.Indices[3] != 3*MaxFrames/4 {
		t.Fatalf("uniform-left on a MaxFrames video: %v", p.Indices)
	}
}
