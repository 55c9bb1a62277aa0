package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/llm/testmodel"
)

// TestTestmodelArchs: `testmodel --arch A` writes each family's pair, and `ask` answers a 4-frame and
// a text-only question through it in process, with probabilities summing to 1.
func TestTestmodelArchs(t *testing.T) {
	video := planTestVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
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

func TestTestmodelUsage(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"testmodel", "--out", dir, "--arch", "gemma3"}, `"gemma3"`},
		{[]string{"testmodel", "--arch", "qwen2vl"}, "--out"},
		{[]string{"testmodel", "--out", dir, "extra"}, "unexpected"},
	} {
		rc, _, errs := askCLI(c.args...)
		if rc != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%q: rc %d stderr %q", c.args, rc, errs)
		}
	}
	// The default is Write's pair under its historical names.
	rc, out, errs := askCLI("testmodel", "--out", dir)
	if rc != 0 || !strings.Contains(out, testmodel.ModelFile) || !strings.Contains(out, `"arch": "llama"`) {
		t.Errorf("rc %d out %s err %s", rc, out, errs)
	}
}
