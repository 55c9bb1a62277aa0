package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/llm/testmodel"
)

// TestTestmodelArchs: `testmodel --arch A` writes each family's pair, and `ask` answers a 4-frame and
// a text-only question through it in process, with probabilities summing to 1.
func TestTestmodelArchs(t *testing.T) {
	t.Parallel()
	video := testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
	dir := t.TempDir()
	opts := []string{"--options", "A. a rabbit", "B. a bird", "C. a cat", "D. a dog"}
	for _, a := range testmodel.Archs {
		rc, out, errs := askCLI("testmodel", "--out", dir, "--arch", string(a))
		if rc != 0 {
			t.Fatalf("%s: testmodel rc %d: %s", a, rc, errs)
		}
		var tm struct{ Model, Mmproj, Arch, Spec string }
		if err := json.Unmarshal([]byte(out), &tm); err != nil || tm.Arch != string(a) || !strings.Contains(tm.Spec, tm.Mmproj) {
			t.Fatalf("%s: %v %s", a, err, out)
		}
		for _, f := range []string{tm.Model, tm.Mmproj} {
			if st, err := os.Stat(f); err != nil || st.Size() == 0 || filepath.Dir(f) != dir {
				t.Errorf("%s: %s: %v", a, f, err)
			}
		}
		// Frames are decoded at the source size (800×640): capped at 16 tokens, a Qwen frame is 4×3
		// merged tokens instead of 29×23 (the cap is ignored by fixed-size projectors).
		spec := tm.Spec + ",threads=1,image_max_tokens=16"
		rc, out, errs = askCLI(append([]string{"ask", "--runtime", spec, video, "--question", "Which animal?",
			"--preset", "videomme", "--frames", "4", "--template", "videomme", "--json"}, opts...)...)
		if rc != 0 {
			t.Fatalf("%s: ask rc %d: %s", a, rc, errs)
		}
		if r := decodeAsk(t, out, 4); len(r.Indices) != 4 || r.Runtime != "llamacpp" {
			t.Errorf("%s: %+v", a, r)
		}
		rc, out, errs = askCLI(append([]string{"ask", "--runtime", spec, "--question", "Which animal?", "--text-only", "--json"}, opts...)...)
		if rc != 0 {
			t.Fatalf("%s: text-only rc %d: %s", a, rc, errs)
		}
		decodeAsk(t, out, 4)
	}
}

// TestTestmodelDefault: the default is Write's pair under its historical names, and the old --seed
// spelling still gives the same files (with its deprecation line).
func TestTestmodelDefault(t *testing.T) {
	dir := t.TempDir()
	rc, out, errs := askCLI("testmodel", "--out", dir)
	if rc != 0 || !strings.Contains(out, testmodel.ModelFile) || !strings.Contains(out, `"arch": "llama"`) {
		t.Errorf("rc %d out %s err %s", rc, out, errs)
	}
	a, _ := os.ReadFile(filepath.Join(dir, testmodel.ModelFile))
	old := t.TempDir()
	rc, _, errs = askCLI("testmodel", "--out", old, "--seed", strconv.FormatUint(testmodel.DefaultSeed, 10))
	b, _ := os.ReadFile(filepath.Join(old, testmodel.ModelFile))
	if rc != 0 || !bytes.Equal(a, b) || len(a) == 0 || !strings.Contains(errs, "--seed is deprecated") || !strings.Contains(errs, "--weights-seed") {
		t.Errorf("--seed: rc %d, same files %v, stderr %q", rc, bytes.Equal(a, b), errs)
	}
}

// TestAskVideoForm: `ask` hands the plan's timing to the runtime, so the Qwen2.5-VL, Qwen3-VL and
// InternVL families read the frames as their own video input by default, and `ask --json` reports it:
// 16 frames of the tiny Qwen2.5-VL are 8 temporal pairs with half the visual tokens of input=images,
// Qwen3-VL writes one timestamp per pair, InternVL one "FrameN: " per frame; input=images keeps one
// group per frame. The tokens and positions themselves are checked against an independent reference in
// llm/llamacpp (TestVideoPositionsMatchReference).
func TestAskVideoForm(t *testing.T) {
	t.Parallel()
	video := testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
	dir := t.TempDir()
	opts := []string{"--options", "A. a rabbit", "B. a bird", "C. a cat", "D. a dog"}
	type out struct {
		InputMode    string  `json:"input_mode"`
		InputForm    string  `json:"input_form"`
		VideoFPS     float64 `json:"video_fps"`
		VisualTokens int     `json:"visual_tokens"`
		VisualGroups []struct {
			Frames []int  `json:"frames"`
			Tokens int    `json:"tokens"`
			Prefix string `json:"prefix"`
		} `json:"visual_groups"`
		Indices []int `json:"indices"`
	}
	ask := func(spec string) out {
		t.Helper()
		rc, stdout, errs := askCLI(append([]string{"ask", "--runtime", spec, video, "--question", "Which animal?",
			"--policy", "uniform", "--frames", "16", "--size", "56x56", "--json"}, opts...)...)
		if rc != 0 {
			t.Fatalf("%s: rc %d: %s", spec, rc, errs)
		}
		var o out
		if err := json.Unmarshal([]byte(stdout), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	for _, arch := range []string{"qwen25vl", "qwen3vl", "internvl"} {
		rc, stdout, errs := askCLI("testmodel", "--out", filepath.Join(dir, arch), "--arch", arch)
		if rc != 0 {
			t.Fatalf("%s: testmodel rc %d: %s", arch, rc, errs)
		}
		var tm struct{ Spec string }
		if err := json.Unmarshal([]byte(stdout), &tm); err != nil {
			t.Fatal(err)
		}
		spec := tm.Spec + ",threads=1"
		vid, img := ask(spec), ask(spec+",input=images")
		if vid.InputMode != "video" || img.InputMode != "images" || len(img.VisualGroups) != 16 || len(vid.Indices) != 16 {
			t.Fatalf("%s: video %+v images %+v", arch, vid, img)
		}
		// Each route names the form the model received.
		if form := map[string]string{"qwen25vl": "qwen25vl-video", "qwen3vl": "qwen3vl-video", "internvl": "internvl-frames"}[arch]; vid.InputForm != form || img.InputForm != "images" {
			t.Errorf("%s: input_form %q as video, %q as images", arch, vid.InputForm, img.InputForm)
		}
		switch arch {
		case "qwen25vl", "qwen3vl":
			// Qwen2.5-VL's temporal positions follow the fps its processor is told; Qwen3-VL's follow the
			// timestamps written in the prompt.
			if len(vid.VisualGroups) != 8 || 2*vid.VisualTokens != img.VisualTokens || (arch == "qwen25vl") != (vid.VideoFPS > 0) {
				t.Errorf("%s: %d groups, %d tokens as video, %d as images, fps %g", arch, len(vid.VisualGroups), vid.VisualTokens, img.VisualTokens, vid.VideoFPS)
			}
			for g, grp := range vid.VisualGroups {
				if len(grp.Frames) != 2 || grp.Frames[0] != 2*g {
					t.Errorf("%s: group %d frames %v", arch, g, grp.Frames)
				}
				if stamped := strings.Contains(grp.Prefix, " seconds>"); stamped != (arch == "qwen3vl") {
					t.Errorf("%s: group %d prefix %q", arch, g, grp.Prefix)
				}
			}
		case "internvl":
			if len(vid.VisualGroups) != 16 || !strings.Contains(vid.VisualGroups[2].Prefix, "Frame3") {
				t.Errorf("%s: %+v", arch, vid.VisualGroups)
			}
		}
	}
}
