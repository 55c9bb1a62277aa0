package loader

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestCatalog(t *testing.T) {
	names := Names()
	if len(names) != 7 || names[0] != Framesweep {
		t.Fatalf("names %v", names)
	}
	for _, s := range Catalog() {
		if s.Upstream == nil || s.Stream == "" || s.Colour == "" || s.Count == "" || s.Budget == "" {
			t.Errorf("%s: incomplete spec %+v", s.Name, s)
		}
		// What is verified here is exactly what the oracles run (../shared/oracles) and framesweep itself.
		want := s.Name == LmmsEval || s.Name == QwenVLUtils || s.Name == Framesweep
		if s.Verified != want {
			t.Errorf("%s: verified %v", s.Name, s.Verified)
		}
		if !s.Verified && !strings.Contains(strings.Join(s.Quirks, " "), "unverified") {
			t.Errorf("%s: unverified but its quirks do not say so", s.Name)
		}
	}
	if _, err := Lookup("decord"); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "lmms-eval") {
		t.Fatalf("unknown loader: %v", err)
	}
	s, _ := Lookup(LmmsEval)
	s.Quirks[0] = "changed"
	if t2, _ := Lookup(LmmsEval); t2.Quirks[0] == "changed" {
		t.Fatal("Lookup hands out the registry's slices")
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Request
		ok   bool
	}{
		{LmmsEval, Request{Frames: 16, SampleFPS: 1, ForceLast: true}, true},
		{LmmsEval, Request{MaxPixels: 1}, false},
		{LmmsEval, Request{Frames: -1}, false},
		{QwenVLUtils, Request{Frames: 16, SampleFPS: 2}, false},
		{QwenVLUtils, Request{SampleFPS: 2, MaxFrames: 64, MaxPixels: 200000, ImagePatchSize: 16}, true},
		{QwenVLUtils, Request{ImagePatchSize: 15}, false},
		{QwenVLUtils, Request{ForceLast: true}, false},
		{VLMEvalKit, Request{Frames: 8, SampleFPS: 1}, false},
		{VLMEvalKit, Request{Frames: 1 << 23}, false},
		{"nope", Request{}, false},
	} {
		if err := Check(c.name, c.r); (err == nil) != c.ok {
			t.Errorf("%s %+v: %v", c.name, c.r, err)
		}
	}
	// NaN is refused by name: it once passed every comparison and surfaced as "max_pixels below
	// min_pixels".
	for _, r := range []Request{{MinPixels: math.NaN(), MaxPixels: 1000}, {MaxPixels: math.Inf(1)}, {SampleFPS: math.NaN()}} {
		err := Check(QwenVLUtils, r)
		if !errors.Is(err, ErrRequest) || !strings.Contains(err.Error(), "not a number") && !strings.Contains(err.Error(), "not finite") ||
			strings.Contains(err.Error(), "below") {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

func TestLmmsEvalPlan(t *testing.T) {
	r25 := Rate{25, 1}
	for _, c := range []struct {
		path   string
		frames int64
		rate   Rate
		r      Request
		all    bool
		idx    string
	}{
		{"a.mp4", 325, r25, Request{Frames: 8}, false, "[0 46 92 138 185 231 277 324]"},
		{"a.mp4", 10, r25, Request{Frames: 32}, false, "[0 1 2 3 4 5 6 7 8 9]"}, // min(N, n): no duplicates to collapse
		{"a.mp4", 10, r25, Request{Frames: 4, ForceLast: true}, false, "[0 3 6 9]"},
		{"a.mp4", 11, r25, Request{Frames: 4, ForceLast: true}, false, "[0 3 6 10]"},              // linspace(0, 9, 3) + [10]
		{"a.mp4", 325, r25, Request{Frames: 32, SampleFPS: 0.5}, false, "[0 64 129 194 259 324]"}, // int(13 s × 0.5) = 6 (numpy)
		{"a.mp4", 325, r25, Request{Frames: 32, SampleFPS: 0.05}, true, ""},                       // int(13 s × 0.05) = 0 frames
		{"a.mp4", 0, r25, Request{Frames: 8}, true, ""},                                           // no header count
		{"a.mp4", 325, Rate{}, Request{Frames: 8, SampleFPS: 1}, true, ""},                        // frames / None
		{"a.mp4", 325, Rate{}, Request{Frames: 8}, false, "[0 46 92 138 185 231 277 324]"},
		{"/data/mkv/a.mp4", 325, r25, Request{Frames: 8}, true, ""},
		{"clip.webm.mp4", 325, r25, Request{Frames: 8}, true, ""},
		{"a.MKV", 325, r25, Request{Frames: 8}, false, "[0 46 92 138 185 231 277 324]"}, // the test is case-sensitive
	} {
		p := LmmsEvalPlan(c.path, c.frames, c.rate, c.r)
		if p.AllFrames != c.all || (!c.all && fmt.Sprint(p.Indices) != c.idx) || (c.all && p.Reason == "") {
			t.Errorf("%s %d %v %+v: %+v", c.path, c.frames, c.rate, c.r, p)
		}
	}
	// fps cap: int(float(Fraction(frames, rate)) * fps) with the rate exact (30000/1001).
	p := LmmsEvalPlan("a.mp4", 390, Rate{30000, 1001}, Request{Frames: 64, SampleFPS: 1})
	if p.Sampled != 13 { // 390 / 29.97 = 13.013 s
		t.Fatalf("sampled %d, want 13", p.Sampled)
	}
}

func TestLmmsEvalTorchcodecPlan(t *testing.T) {
	idx, err := LmmsEvalTorchcodecPlan(325, 25, Request{Frames: 32, SampleFPS: 0.05})
	if err != nil || fmt.Sprint(idx) != "[0]" { // max(1, …): one frame, not every frame as the PyAV path
		t.Fatalf("%v %v", idx, err)
	}
	if _, err := LmmsEvalTorchcodecPlan(0, 25, Request{}); !errors.Is(err, ErrUpstream) {
		t.Fatal(err)
	}
}

func TestTorchvisionFrames(t *testing.T) {
	// Decoder output pts: a repeat (the later frame wins), a negative pts (dropped), out of order.
	got, err := TorchvisionFrames([]int64{-2, 0, 2, 1, 2, 3}, []bool{true, true, true, true, true, true})
	if err != nil || fmt.Sprint(got) != "[1 3 4 5]" {
		t.Fatalf("%v %v: want outputs 1 (pts 0), 3 (pts 1), 4 (the second pts 2), 5", got, err)
	}
	if _, err := TorchvisionFrames([]int64{0, 0}, []bool{true, false}); !errors.Is(err, ErrUpstream) {
		t.Fatalf("a frame without pts: %v", err)
	}
	if got, err := TorchvisionFrames(nil, nil); err != nil || len(got) != 0 {
		t.Fatal(got, err)
	}
}

func TestQwenRules(t *testing.T) {
	idx, sfps, err := QwenFrames(QwenVLUtils, 325, 25, Request{Frames: 8})
	if err != nil || fmt.Sprint(idx) != "[0 46 93 139 185 231 278 324]" || sfps != 8.0/325*25 {
		t.Fatalf("%v %v %v", idx, sfps, err)
	}
	if _, _, err := QwenFrames(QwenVLUtils, 3, 30, Request{Frames: 8}); !errors.Is(err, ErrUpstream) {
		t.Fatalf("nframes > frames: %v", err)
	}
	if _, _, err := QwenFrames(QwenVLUtils, 100, 0, Request{}); !errors.Is(err, ErrUpstream) {
		t.Fatalf("no fps: %v", err)
	}
	// fetch_video's resize: 320x180 with 8 frames → 448x252 (factor 28); 16 → factor 32 with patch 16.
	if w, h, err := QwenSize(QwenVLUtils, 320, 180, 8, Request{}); err != nil || w != 448 || h != 252 {
		t.Fatalf("%dx%d %v", w, h, err)
	}
	if w, h, err := QwenSize(QwenVLUtils, 1920, 1080, 16, Request{ImagePatchSize: 16}); err != nil || w != 1152 || h != 640 {
		t.Fatalf("%dx%d %v", w, h, err)
	}
	if _, _, err := QwenSize(QwenVLUtils, 1000, 2, 8, Request{}); !errors.Is(err, ErrUpstream) {
		t.Fatalf("aspect ratio 500: %v", err)
	}
}

func TestDecordAndVLMEvalKit(t *testing.T) {
	if DecordCount(80, 0, Rate{24000, 1001}, 3) != 80 || DecordCount(0, 72, Rate{}, 0) != 72 || DecordCount(0, 0, Rate{30, 1}, 2.5) != 75 {
		t.Fatal("decord count")
	}
	idx, err := VLMEvalKitIndices(120, 30, Request{Frames: 8})
	if err != nil || fmt.Sprint(idx) != "[13 26 40 53 66 80 93 106]" {
		t.Fatalf("%v %v", idx, err)
	}
	idx, err = VLMEvalKitIndices(120, 30, Request{SampleFPS: 1})
	if err != nil || fmt.Sprint(idx) != "[0 30 60 90]" {
		t.Fatalf("%v %v", idx, err)
	}
}
