package llm

import (
	"strings"
	"testing"
)

// TestFamilyOf: the family a model name names, and none (never a guess) for names that name none.
func TestFamilyOf(t *testing.T) {
	for name, want := range map[string]string{
		"Qwen/Qwen2.5-VL-7B-Instruct":          FamilyQwen25VL,
		"qwen2_5_vl_7b":                        FamilyQwen25VL,
		"Qwen2.5-VL-7B-Instruct-Q4_K_M.gguf":   FamilyQwen25VL,
		"Qwen/Qwen2-VL-2B-Instruct":            FamilyQwen2VL,
		"Qwen/Qwen3-VL-8B-Instruct":            FamilyQwen3VL,
		"qwen3vl":                              FamilyQwen3VL,
		"OpenGVLab/InternVL3_5-8B":             FamilyInternVL,
		"InternVL3-8B-Instruct-Q4_K_M":         FamilyInternVL,
		"llava-hf/LLaVA-NeXT-Video-7B-hf":      FamilyLLaVANeXTVideo,
		"llava-hf/llava-1.5-7b-hf":             FamilyLLaVA,
		"liuhaotian/llava-v1.6-mistral-7b":     "",
		"lmms-lab/llava-onevision-qwen2-7b-ov": "",
		"Qwen/Qwen2.5-7B-Instruct":             "",
		"tiny":                                 "",
		"":                                     "",
		"gemma-3-4b-it":                        "",
	} {
		if got := FamilyOf(name); got != want {
			t.Errorf("FamilyOf(%q) = %q, want %q", name, got, want)
		}
	}
	for _, f := range Families {
		if CheckFamily(f) != nil {
			t.Errorf("family %q refused", f)
		}
	}
	if CheckFamily("qwen2.5vl") == nil {
		t.Error("a misspelt family accepted")
	}
}

// TestVisionCount: each family's count at the released checkpoints' settings, against numbers
// upstream documents (SAMPLING.md: 1920×1080 at 16 or 64 frames resizes to 1008×560, 720 tokens
// per pair for Qwen2.5-VL, 640×1152 for Qwen3-VL; InternVL's 16:9 image at max_num 12 is 8 tiles and
// a thumbnail; LLaVA-NeXT-Video 144 a frame; LLaVA-1.5 576 an image) and refusals.
func TestVisionCount(t *testing.T) {
	count := func(fam string, in VisualInput) (VisualCount, error) {
		v, ok := DefaultVision(fam)
		if !ok {
			t.Fatalf("no vision for %s", fam)
		}
		return v.Count(in)
	}
	for _, tc := range []struct {
		fam      string
		in       VisualInput
		tokens   int
		overhead int
	}{
		{FamilyQwen25VL, VisualInput{Form: FormVLLMVideo, Frames: 64, W: 1008, H: 560}, 32 * 720, 2},
		{FamilyQwen25VL, VisualInput{Form: FormVLLMVideo, Frames: 15, W: 1008, H: 560}, 8 * 720, 2}, // the last frame padded
		{FamilyQwen2VL, VisualInput{Form: FormImageURL, Frames: 4, W: 1008, H: 560}, 4 * 720, 8},    // images: each its own 720
		{FamilyQwen3VL, VisualInput{Form: FormVLLMVideo, Frames: 16, W: 1152, H: 640, PairTimes: []float64{0.3, 1.3, 2.4, 3.4, 4.5, 5.5, 6.6, 12.5}}, 8 * 720, 8*2 + 7*6 + 7},
		{FamilyInternVL, VisualInput{Form: FormImageURL, Frames: 1, W: 1920, H: 1080}, 9 * 256, 2},
		{FamilyInternVL, VisualInput{Form: FormVLLMVideo, Frames: 12, W: 448, H: 448}, 12 * 256, 9*7 + 3*8},
		{FamilyLLaVANeXTVideo, VisualInput{Form: FormVLLMVideo, Frames: 32, W: 336, H: 336}, 32 * 144, 0},
		{FamilyLLaVA, VisualInput{Form: FormImageURL, Frames: 3, W: 640, H: 480}, 3 * 576, 0},
	} {
		got, err := count(tc.fam, tc.in)
		if err != nil || got.Tokens != tc.tokens || got.Overhead != tc.overhead {
			t.Errorf("%s %+v: %+v %v, want %d + %d", tc.fam, tc.in, got, err, tc.tokens, tc.overhead)
		}
	}
	for _, tc := range []struct {
		fam string
		in  VisualInput
	}{
		{FamilyLLaVA, VisualInput{Form: FormVLLMVideo, Frames: 4, W: 336, H: 336}},
		{FamilyLLaVANeXTVideo, VisualInput{Form: FormImageURL, Frames: 4, W: 336, H: 336}},
		{FamilyQwen25VL, VisualInput{Form: FormVLLMVideo, Frames: 4, Images: 5, W: 448, H: 448}},
		{FamilyQwen25VL, VisualInput{Form: FormVLLMVideo, Frames: 0, W: 448, H: 448}},
		{FamilyQwen25VL, VisualInput{Form: FormImageURL, Frames: 1, W: 1, H: 400}}, // aspect above 200
	} {
		if _, err := count(tc.fam, tc.in); err == nil {
			t.Errorf("%s %+v: counted", tc.fam, tc.in)
		}
	}
	if _, err := (Vision{Family: FamilyLLaVA, Patch: 14, Merge: 1, Image: 336, Anyres: true}).Count(VisualInput{Form: FormImages, Frames: 1, W: 64, H: 64}); err == nil {
		t.Error("an anyres projector counted")
	}
	if _, err := (Vision{Family: "gemma", Patch: 14, Merge: 1}).Count(VisualInput{Form: FormImages, Frames: 1, W: 64, H: 64}); err == nil || !strings.Contains(err.Error(), "unknown family") {
		t.Errorf("an unknown family: %v", err)
	}
}

// TestMtmdRounding: mtmd resizes a Qwen image in float32 and rounds a half away from zero, where
// transformers' smart_resize rounds it to even: a 70-pixel side (2.5 × 28) is 84 in process and 56
// on a server.
func TestMtmdRounding(t *testing.T) {
	mtmd := Vision{Family: FamilyQwen25VL, Patch: 14, Merge: 2, MinPixels: 8 * 784, MaxPixels: 4096 * 784, Mtmd: true}
	server, _ := DefaultVision(FamilyQwen25VL)
	in := VisualInput{Form: FormImages, Frames: 1, W: 70, H: 112}
	a, _ := mtmd.Count(in)
	in.Form = FormImageURL
	b, _ := server.Count(in)
	if a.Tokens != 3*4 || b.Tokens != 2*4 {
		t.Errorf("70×112: mtmd %d, smart_resize %d tokens; want 12 and 8", a.Tokens, b.Tokens)
	}
	if h, w := mtmdSize(42, 56, 28, 8*784, 4096*784); h != 84 || w != 112 { // below the minimum: scaled up
		t.Errorf("56×42: %dx%d, want 112×84", w, h)
	}
	if h, w := mtmdSize(421, 560, 28, 8*784, 16*784); h != 84 || w != 112 { // above the maximum: scaled down
		t.Errorf("560×421 at 16 tokens: %dx%d, want 112×84", w, h)
	}
}

// TestVisualCauses: the causes named for each route.
func TestVisualCauses(t *testing.T) {
	for _, tc := range []struct {
		form  string
		ratio float64
		want  string
	}{
		{FormVLLMVideo, 0.5, "num_frames"},
		{FormVLLMVideo, 0.5, "default 32"},
		{FormSGLangVideo, 0.5, "twice"},
		{FormImageURL, 0.4, "dropped images"},
		{FormImageURL, 1.5, "larger"},
		{FormQwen25VLVideo, 0.9, "mtmd"},
	} {
		if got := VisualCauses(tc.form, tc.ratio); !strings.Contains(got, tc.want) {
			t.Errorf("%s %.2f: %q, want %q in it", tc.form, tc.ratio, got, tc.want)
		}
	}
	exp, seen := 100, 50
	if r, ok := (&VisualCheck{Expected: &exp, Seen: &seen}).Ratio(); !ok || r != 0.5 {
		t.Errorf("ratio %v %v", r, ok)
	}
}
