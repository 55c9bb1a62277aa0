package main

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

func askCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	rc := dispatch(args, &out, &errb)
	return rc, out.String(), errb.String()
}

type askJSON struct {
	Text     string             `json:"text"`
	Choice   string             `json:"choice"`
	Probs    map[string]float64 `json:"probs"`
	Template string             `json:"template"`
	Runtime  string             `json:"runtime"`
	Indices  []int              `json:"indices"`
	Latency  float64            `json:"latency_s"`
}

func decodeAsk(t *testing.T, out string, nOpts int) askJSON {
	t.Helper()
	var a askJSON
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var s float64
	for _, p := range a.Probs {
		s += p
	}
	if len(a.Probs) != nOpts || math.Abs(s-1) > 1e-9 {
		t.Fatalf("probs %v", a.Probs)
	}
	return a
}

func TestSplitOptions(t *testing.T) {
	rest, opts, seen := splitOptions([]string{"v.mp4", "--options", "A. x y", "B. z", "--json", "--options=C. w", "--", "--options"})
	if !seen || !slices.Equal(opts, []string{"A. x y", "B. z", "C. w"}) || !slices.Equal(rest, []string{"v.mp4", "--json", "--", "--options"}) {
		t.Errorf("rest %q opts %q", rest, opts)
	}
}

func TestTestModelAndAsk(t *testing.T) {
	t.Parallel()
	video := testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
	dir := t.TempDir()
	rc, out, errs := askCLI("testmodel", "--out", dir)
	if rc != 0 {
		t.Fatalf("testmodel rc %d: %s", rc, errs)
	}
	var tm struct{ Model, Mmproj, Spec string }
	if err := json.Unmarshal([]byte(out), &tm); err != nil || tm.Spec == "" {
		t.Fatalf("%v %s", err, out)
	}
	spec := tm.Spec + ",threads=1"
	opts := []string{"--options", "A. a rabbit", "B. a bird", "C. a cat", "D. a dog"}

	rc, out, errs = askCLI(append([]string{"ask", "--runtime", spec, video, "--question", "Which animal?", "--preset", "videomme", "--frames", "4", "--template", "videomme", "--json"}, opts...)...)
	if rc != 0 {
		t.Fatalf("ask rc %d: %s", rc, errs)
	}
	a := decodeAsk(t, out, 4)
	if len(a.Indices) != 4 || a.Template != "videomme" || a.Runtime != "llamacpp" {
		t.Errorf("%+v", a)
	}
	rc, out, errs = askCLI(append([]string{"ask", "--runtime", spec, "--question", "Which animal?", "--text-only", "--json"}, opts...)...)
	if rc != 0 {
		t.Fatalf("text-only rc %d: %s", rc, errs)
	}
	if a := decodeAsk(t, out, 4); len(a.Indices) != 0 || a.Template != "generic" {
		t.Errorf("%+v", a)
	}
	// Human output without --json.
	rc, out, _ = askCLI(append([]string{"ask", "--runtime", spec, "--question", "Q", "--text-only"}, opts...)...)
	if rc != 0 || !strings.HasPrefix(out, "choice: ") {
		t.Errorf("rc %d out %q", rc, out)
	}
}

func TestAskONNX(t *testing.T) {
	model := testenv.NeedEnv(t, "FRAMESWEEP_OCR_MODEL", "FRAMESWEEP_ORT_LIB")[0]
	video := testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
	rc, out, errs := askCLI("ask", "--runtime", "onnx:model="+model+",size=48x192,threads=1", video, "--question", "Upside down?",
		"--options", "A. no", "B. yes", "--policy", "uniform", "--frames", "3", "--json")
	if rc != 0 {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	if a := decodeAsk(t, out, 2); a.Choice == "" || len(a.Indices) != 3 {
		t.Errorf("%+v", a)
	}
	var a askOutput
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if a.Geometry != "pad:192x48" || a.Kernel != "cv-linear" || a.Width != 192 || a.Height != 48 || len(a.Indices) != 3 {
		t.Errorf("%+v", a)
	}
	// The tensor the classifier consumed is extract's object for that config (pad:192x48, float32,
	// mean = std = 0.5 is "half", NCHW, OpenCV bilinear): input_sha256 names what the model saw.
	grid := exWriteGrid(t, "frames: [3]\npolicies: [uniform]\nresolutions: [\"pad:192x48\"]\n")
	store := t.TempDir()
	if code, _, e := exRun(t, "--grid", grid, "--out", store, "--dtype", "f32", "--norm", "half", "--layout", "nchw", "--kernel", "cv-linear", video); code != 0 {
		t.Fatalf("extract: %d %s", code, e)
	}
	if objs := pinCollect(t, store); len(objs) != 1 || objs[0].Config != a.Config || objs[0].FramesSHA256 != a.InputSHA256 {
		t.Fatalf("ask fed %s (%s), extract stored %+v", a.InputSHA256, a.Config, objs)
	}
	// The runtime describes its input itself: a geometry or kernel of the user's is bad usage.
	rc, _, errs = askCLI("ask", "--runtime", "onnx:model="+model+",size=48x192,threads=1", video, "--question", "Upside down?",
		"--options", "A. no", "B. yes", "--policy", "uniform", "--frames", "3", "--size", "64x64")
	if rc != 2 || !strings.Contains(errs, "pad:192x48") {
		t.Errorf("--size with onnx: rc %d: %s", rc, errs)
	}
}

// TestAskFeedsWhatExtractStores: ask --preset feeds the preset's sampling and geometry (what plan
// --preset reports), --size overrides it, and the frames fed are byte for byte extract's object for
// the same config (input_sha256 = sha256 of the object's frames tensor).
func TestAskFeedsWhatExtractStores(t *testing.T) {
	t.Parallel()
	video := filepath.Join("..", "..", "testdata", "videos", "nasa_13013.mp4")
	dir := t.TempDir()
	rc, out, errs := askCLI("testmodel", "--out", dir)
	if rc != 0 {
		t.Fatalf("testmodel rc %d: %s", rc, errs)
	}
	var tm struct{ Spec string }
	if err := json.Unmarshal([]byte(out), &tm); err != nil || tm.Spec == "" {
		t.Fatalf("testmodel: %v: %s", err, out)
	}
	opts := []string{"--options", "A. a", "B. b"}
	ask := func(extra ...string) askOutput {
		t.Helper()
		args := append([]string{"ask", "--runtime", tm.Spec + ",threads=1", video, "--question", "Q", "--json"}, extra...)
		rc, out, errs := askCLI(append(args, opts...)...)
		if rc != 0 {
			t.Fatalf("ask %v: rc %d: %s", extra, rc, errs)
		}
		var a askOutput
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := ask("--preset", "qwen2.5-vl", "--frames", "4")
	// qwen-vl-utils smart_resize of the 480x270 stream at 4 frames: 476x280 (factor 28).
	if a.Geometry != "qwen2.5-vl" || a.Width != 476 || a.Height != 280 || a.Config != "f4-qwen2.5-vl-qwen2.5-vl-raw" {
		t.Fatalf("preset geometry not applied: %+v", a)
	}
	b := ask("--preset", "qwen2.5-vl", "--frames", "4", "--size", "64x48")
	if b.Width != 64 || b.Height != 48 || b.InputSHA256 == a.InputSHA256 {
		t.Fatalf("--size did not override: %+v", b)
	}
	grid := exWriteGrid(t, "frames: [4]\npresets: [qwen2.5-vl]\nresolutions: [\"qwen2.5-vl\"]\n")
	cache := t.TempDir()
	if code, _, e := exRun(t, "--grid", grid, "--out", cache, video); code != 0 {
		t.Fatalf("extract: %d %s", code, e)
	}
	objs := pinCollect(t, cache)
	if len(objs) != 1 || objs[0].Config != a.Config || objs[0].FramesSHA256 != a.InputSHA256 {
		t.Fatalf("ask fed %s (%s), extract stored %+v", a.InputSHA256, a.Config, objs)
	}
	// A grid that names the preset and no resolution means the same: the preset's geometry, the
	// same config id and bytes (it used to feed the 480x270 source frames).
	implicit := t.TempDir()
	if code, _, e := exRun(t, "--grid", exWriteGrid(t, "frames: [4]\npresets: [qwen2.5-vl]\n"), "--out", implicit, video); code != 0 {
		t.Fatalf("extract: %d %s", code, e)
	}
	if objs := pinCollect(t, implicit); len(objs) != 1 || objs[0].Config != a.Config || objs[0].FramesSHA256 != a.InputSHA256 {
		t.Fatalf("ask fed %s (%s), the grid without resolutions stored %+v", a.InputSHA256, a.Config, objs)
	}
	// --resolution native asks for the source size under the preset.
	if n := ask("--preset", "qwen2.5-vl", "--frames", "4", "--resolution", "native"); n.Width != 480 || n.Height != 270 {
		t.Fatalf("--resolution native: %+v", n)
	}
}
