package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

func runPlanCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	rc := dispatch(args, &out, &errb)
	return rc, out.String(), errb.String()
}

func TestPlanTotalFramesJSON(t *testing.T) {
	rc, out, errs := runPlanCLI("plan", "--total-frames", "300", "--fps", "30", "--preset", "qwen3-vl", "--src-size", "1920x1080", "--json")
	if rc != 0 {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	var got struct {
		Preset           string    `json:"preset"`
		Indices          []int     `json:"indices"`
		TimestampsS      []float64 `json:"timestamps_s"`
		TimestampStrings []string  `json:"timestamp_strings"`
		TotalFrames      int       `json:"total_frames"`
		FPS              float64   `json:"fps"`
		OutputSize       string    `json:"output_size"`
		VisualTokens     int       `json:"visual_tokens"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Preset != "qwen3-vl" || len(got.Indices) != 20 || got.Indices[1] != 16 || got.TimestampStrings[0] != "<0.3 seconds>" ||
		got.TotalFrames != 300 || got.FPS != 30 || got.TimestampsS[1] != 16.0/30 {
		t.Fatalf("%+v", got)
	}
	// qwen-vl-utils 0.0.14 defaults: 1080p → 640×1152 (H×W), 720 tokens per 2 frames.
	if got.OutputSize != "1152x640" || got.VisualTokens != 7200 {
		t.Fatalf("output %s tokens %d", got.OutputSize, got.VisualTokens)
	}
	rc, out, _ = runPlanCLI("plan", "--total-frames", "1000", "--fps", "25", "--policy", "random", "--frames", "4", "--sampler-seed", "3", "--json")
	rc2, out2, _ := runPlanCLI("plan", "--policy", "random", "--sampler-seed", "3", "--frames", "4", "--json", "--total-frames", "1000", "--fps", "25")
	if rc != 0 || rc2 != 0 || out != out2 || !strings.Contains(out, `"policy": "random"`) {
		t.Fatalf("random plan not reproducible:\n%s\n%s", out, out2)
	}
}

func TestPlanExitStatus(t *testing.T) {
	cases := []struct {
		args []string
		rc   int
		msg  string
	}{
		{[]string{"plan", "--total-frames", "17", "--fps", "30", "--preset", "qwen2.5-vl", "--frames", "32"}, 1, "--total-frames 17 --fps 30: qwen2.5-vl: nframes"},
		{[]string{"plan", "--total-frames", "17", "--fps", "30", "--preset", "qwen9"}, 2, "unknown preset"},
		{[]string{"plan", "--total-frames", "17", "--fps", "30", "--policy", "uniform"}, 2, "frame budget"},
		{[]string{"plan", "--total-frames", "17", "--fps", "30"}, 2, "--preset or --policy"},
		{[]string{"plan", "--total-frames", "17", "--fps", "30", "--preset", "internvl3", "--policy", "uniform"}, 2, "exactly one"},
		{[]string{"plan", "--preset", "internvl3"}, 2, "need a VIDEO"},
		{[]string{"plan", "--total-frames", "0", "--fps", "30", "--preset", "internvl3"}, 2, "flag -total-frames: out of range (want 1..4194304)"},
		{[]string{"plan", "a.mp4", "--total-frames", "10", "--fps", "30", "--preset", "internvl3"}, 2, "not both"},
		{[]string{"plan", "--total-frames", "10", "--fps", "30", "--grid", "g.yaml", "--frames", "3"}, 2, "--frames does not apply"},
		{[]string{"plan", "--total-frames", "10", "--fps", "30", "--grid", "/nonexistent/g.yaml"}, 1, "/nonexistent/g.yaml"},
		{[]string{"plan", "/nonexistent/v.mp4", "--preset", "internvl3"}, 1, "/nonexistent/v.mp4"},
		{[]string{"plan", "/nonexistent/v.mp4", "--preset", "internvl3", "--resolution", "bogus"}, 2, "--resolution"},
		{[]string{"plan", "--total-frames", "100", "--fps", "30", "--preset", "llava-onevision", "--frames", "3000000000"}, 2, "flag -frames: out of range (want 0..4194304)"},
	}
	for _, c := range cases {
		rc, _, errs := runPlanCLI(c.args...)
		if rc != c.rc || !strings.Contains(errs, c.msg) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: rc %d, stderr %q; want rc %d containing %q on one line", c.args, rc, errs, c.rc, c.msg)
		}
	}
}

func TestPlanBrokenVideo(t *testing.T) {
	p := filepath.Join(t.TempDir(), "garbage.mp4")
	os.WriteFile(p, bytes.Repeat([]byte("not a video "), 100), 0o644)
	rc, _, errs := runPlanCLI("plan", p, "--preset", "lmms-eval")
	if rc != 1 || !strings.Contains(errs, p) || strings.Count(errs, "\n") != 1 {
		t.Fatalf("rc %d stderr %q", rc, errs)
	}
}

func TestPlanVideoAndGrid(t *testing.T) {
	v := testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
	rc, out, errs := runPlanCLI("plan", v, "--preset", "lmms-eval", "--frames", "8", "--json")
	if rc != 0 {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	var one struct {
		Path        string `json:"path"`
		TotalFrames int    `json:"total_frames"`
		Indices     []int  `json:"indices"`
		OutputSize  string `json:"output_size"`
	}
	if err := json.Unmarshal([]byte(out), &one); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// 120 frames (MANIFEST.tsv): np.linspace(0, 119, 8, dtype=int).
	if one.TotalFrames != 120 || !slices.Equal(one.Indices, []int{0, 17, 34, 51, 68, 85, 102, 119}) || one.OutputSize != "800x640" {
		t.Fatalf("%+v", one)
	}

	grid := filepath.Join(t.TempDir(), "g.yaml")
	os.WriteFile(grid, []byte("frames: [4, 8, 200]\npolicies: [nested]\npresets: [vlmevalkit]\nresolutions: [\"224x224\"]\ntext_only: true\n"), 0o644)
	rc, out, errs = runPlanCLI("plan", "--grid", grid, v, "--json")
	if rc != 1 || !strings.Contains(errs, "1 of 7 configs cannot be planned") {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	var g struct {
		Configs []struct {
			ID         string `json:"id"`
			OutputSize string `json:"output_size"`
			Error      string `json:"error"`
			Plan       *struct {
				Indices []int `json:"indices"`
			} `json:"plan"`
		} `json:"configs"`
		Union struct {
			Size   int `json:"size"`
			Shared int `json:"shared"`
		} `json:"union"`
		Decode struct {
			FramesToDecode int  `json:"frames_to_decode"`
			Seeks          *int `json:"seeks"`
		} `json:"decode"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Configs) != 7 || g.Configs[0].ID != "f4-nested-224x224-raw" || g.Configs[0].OutputSize != "224x224" {
		t.Fatalf("%+v", g.Configs)
	}
	// f200-nested cannot be planned (120 frames); vlmevalkit repeats frames as upstream does.
	if g.Configs[2].Error == "" || g.Union.Size < 8 || g.Union.Size > 120 || g.Union.Shared < 4 || g.Decode.Seeks == nil || g.Decode.FramesToDecode != g.Union.Size {
		t.Fatalf("union %+v decode %+v configs %+v", g.Union, g.Decode, g.Configs)
	}
	// The example output of docs/sampler.md: the decoder's plan of the union's Read (115 pictures: the
	// non-reference ones nobody asked for are left out; extract's codec_frames says the same).
	rc, out, errs = runPlanCLI("plan", "--grid", "../../examples/grid.yaml", v)
	if rc != 0 || !strings.Contains(out, "union: 106 frames (2064 requested, 106 shared)\ndecode: 106 frames to decode, 115 decoded in one pass, seeks 0\n") {
		t.Fatalf("rc %d %s\n%s", rc, errs, out)
	}
	rc, out, _ = runPlanCLI("plan", "--grid", "../../examples/grid.yaml", "--total-frames", "1800", "--fps", "30")
	if rc != 0 || !strings.Contains(out, "f16-uniform-448x448-raw") || !strings.Contains(out, "seeks unknown") {
		t.Fatalf("rc %d\n%s", rc, out)
	}
}

// TestPlanDecodeIsExtract: what `plan --grid` says decoding the union costs is what extract of the
// same grid decodes: the union's frames, the pictures the decoder output (codec_frames), and at
// least the seeks it made (restarts at a keyframe it reached by reading on are not seeks).
func TestPlanDecodeIsExtract(t *testing.T) {
	gridFile := filepath.Join(t.TempDir(), "g.yaml")
	if err := os.WriteFile(gridFile, []byte("frames: [4, 8, 24]\npolicies: [uniform, nested, dense-start]\nresolutions: [\"32x32\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4", "torchcodec/nasa_13013.mp4", "decord/flipping_a_pancake.mkv"} {
		v := testenv.SharedVideo(t, rel)
		rc, out, errs := runPlanCLI("plan", "--grid", gridFile, v, "--json")
		var g struct {
			Decode decode.ReadCost `json:"decode"`
		}
		if rc != 0 || json.Unmarshal([]byte(out), &g) != nil || g.Decode.Seeks == nil {
			t.Fatalf("%s: plan rc %d %s\n%s", rel, rc, errs, out)
		}
		code, sum, e := exRun(t, "--grid", gridFile, "--out", t.TempDir(), "--pipeline", "raw", "--videos", v)
		if code != 0 || len(sum.PerVideo) != 1 {
			t.Fatalf("%s: extract exit %d: %s", rel, code, e)
		}
		x := sum.PerVideo[0]
		if g.Decode.FramesToDecode != x.FramesUnion || g.Decode.FramesDecoded != x.CodecFrames || *g.Decode.Seeks < x.Seeks {
			t.Errorf("%s: plan %d frames, %d decoded, %d seeks; extract %d frames, %d decoded, %d seeks",
				rel, g.Decode.FramesToDecode, g.Decode.FramesDecoded, *g.Decode.Seeks, x.FramesUnion, x.CodecFrames, x.Seeks)
		}
	}
}

func TestPlanList(t *testing.T) {
	rc, out, _ := runPlanCLI("plan", "--list")
	for _, p := range []string{"qwen2.5-vl", "qwen3-vl", "internvl3", "llava-onevision", "llava-video", "lmms-eval", "vlmevalkit", "videomme", "uniform", "random", "dense-start", "fps", "nested"} {
		if !strings.Contains(out, " "+p+" ") {
			t.Errorf("--list lacks %s", p)
		}
	}
	if rc != 0 || !strings.Contains(out, "upstream: QwenLM/Qwen2.5-VL") {
		t.Fatalf("rc %d\n%s", rc, out)
	}
}

// A resolution that rejects the source (qwen-vl-utils raises above aspect 200) is that config's error,
// as extract reports the pair (exit 1, the JSON printed all the same), not an output size left out.
func TestPlanGridResolutionError(t *testing.T) {
	grid := filepath.Join(t.TempDir(), "g.yaml")
	os.WriteFile(grid, []byte("frames: [4]\npolicies: [uniform]\nresolutions: [\"qwen2.5-vl\", \"448x448\"]\n"), 0o644)
	rc, out, errs := runPlanCLI("plan", "--grid", grid, "--total-frames", "100", "--fps", "30", "--src-size", "4020x20", "--json")
	if rc != exitError || !strings.Contains(errs, "1 of 2 configs cannot be planned") {
		t.Fatalf("rc %d: %s", rc, errs)
	}
	var g struct {
		Configs []struct {
			OutputSize string `json:"output_size"`
			Shape      []int  `json:"shape"`
			Error      string `json:"error"`
		} `json:"configs"`
		Failed int `json:"failed"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Configs) != 2 || !strings.Contains(g.Configs[0].Error, "aspect ratio") || g.Configs[0].OutputSize != "" || g.Failed != 1 ||
		g.Configs[1].OutputSize != "448x448" || fmt.Sprint(g.Configs[1].Shape) != "[4 448 448 3]" || g.Configs[1].Error != "" {
		t.Fatalf("%+v", g.Configs)
	}
}
