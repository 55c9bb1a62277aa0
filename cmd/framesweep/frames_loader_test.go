package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/extract"
)

func testdataVideo(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(repoDir(t), "testdata", "videos", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// framesLoader runs `frames VIDEO --loader …` in process and decodes its result.
func framesLoader(t *testing.T, args ...string) (extract.LoaderFramesResult, string) {
	t.Helper()
	code, out, errs := runDecodeCLI(append([]string{"frames"}, args...)...)
	if code != exitOK {
		t.Fatalf("frames %v: exit %d: %s", args, code, errs)
	}
	var res extract.LoaderFramesResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Result == nil {
		t.Fatalf("frames %v: %v\n%s", args, err, out)
	}
	return res, out
}

// TestFramesLoaderMatchesOracle: `frames --loader lmms-eval` writes exactly the frames lmms-eval's
// read_video returns (the upstream code run as an oracle): on a two-stream file (its first stream,
// 320x180, where framesweep reads the best, 480x270), a rotated .mov (not rotated) and a .webm (every
// frame, whatever the budget); `--loader qwen-vl-utils` the frames and resized tensors of fetch_video
// with the torchvision reader, the resized ones under OUT/resized/.
func TestFramesLoaderMatchesOracle(t *testing.T) {
	t.Parallel()
	vids := []string{testdataVideo(t, "nasa_13013.mp4"), testdataVideo(t, "video_90.mov"), testdataVideo(t, "bear-vp9-odd-dimensions.webm")}
	lm := runLoaderOracle(t, "lmms-eval", 8, vids...)
	for _, v := range vids {
		dir := t.TempDir()
		res, out := framesLoader(t, v, "--loader", "lmms-eval", "--frames", "8", "--out", dir)
		want := lm[v].Frames
		if len(res.Written) != len(want) || !strings.Contains(out, `"loader": "lmms-eval"`) {
			t.Fatalf("%s: %d frames written, read_video returns %d", v, len(res.Written), len(want))
		}
		for i, f := range res.Written {
			if got := pngSHA256(t, f); got != want[i] {
				t.Errorf("%s: %s is not read_video's frame %d", v, f, i)
			}
		}
		t.Logf("%s: %d frames equal read_video's", filepath.Base(v), len(want))
	}
	q := runLoaderOracle(t, "qwen-vl-utils", 8, vids[0], vids[2])
	for _, v := range []string{vids[0], vids[2]} {
		dir := t.TempDir()
		res, out := framesLoader(t, v, "--loader", "qwen-vl-utils", "--frames", "8", "--torch", "1.13-avx2", "--out", dir)
		o := q[v]
		got := res.Positions()
		if !strings.Contains(out, `"resized_width"`) {
			t.Fatalf("no resized size in %s", out)
		}
		if len(res.Written) != len(o.Frames) || len(res.ResizedWritten) != len(o.Resized) || !slices.Equal(got, o.Indices) {
			t.Fatalf("%s: %d frames %d resized, positions %v; fetch_video: %d, %d, %v", v, len(res.Written), len(res.ResizedWritten), got, len(o.Frames), len(o.Resized), o.Indices)
		}
		for i := range o.Frames {
			if pngSHA256(t, res.Written[i]) != o.Frames[i] || pngSHA256(t, res.ResizedWritten[i]) != o.Resized[i] ||
				res.ResizedWritten[i] != filepath.Join(dir, "resized", fmt.Sprintf("%06d.png", got[i])) {
				t.Errorf("%s: frame %d (%s, %s) is not fetch_video's", v, i, res.Written[i], res.ResizedWritten[i])
			}
		}
		t.Logf("%s: %d frames and resized frames (%v) equal fetch_video's", filepath.Base(v), len(o.Frames), o.ResizedShape)
	}
}

// TestPlanLoader: `plan --loader` gives the loader's positions without converting a pixel (the same as
// frames --loader writes), its counts and its description; a loader grid plans through the reader.
func TestPlanLoader(t *testing.T) {
	v := testdataVideo(t, "nasa_13013.mp4")
	res, _ := framesLoader(t, v, "--loader", "vlmevalkit", "--frames", "8", "--out", t.TempDir())
	rc, out, errs := runPlanCLI("plan", v, "--loader", "vlmevalkit", "--frames", "8", "--resolution", "64x48", "--json")
	var p extract.LoaderPlan
	if rc != 0 || json.Unmarshal([]byte(out), &p) != nil {
		t.Fatalf("rc %d %s\n%s", rc, errs, out)
	}
	want := res.Positions()
	if !slices.Equal(p.Indices, want) || p.Loader != "vlmevalkit" || p.LoaderResult.Count != 390 || p.LoaderResult.StreamIndex != 3 ||
		p.TotalFrames != 390 || p.OutputSize != "64x48" || p.Spec.Name != "vlmevalkit" || p.Spec.JPEGQuality != 75 {
		t.Fatalf("plan --loader %+v, frames wrote positions %v", p, want)
	}
	rc, out, _ = runPlanCLI("plan", v, "--loader", "lmms-eval", "--frames", "4")
	if rc != 0 || !strings.Contains(out, "loader lmms-eval: 4 of 325 frames (count from header, 25 fps, stream 0)\npositions: 0 108 216 324\n") {
		t.Fatalf("rc %d\n%s", rc, out)
	}
	grid := exWriteGrid(t, "loader: lmms-eval\nframes: [4, 8]\nresolutions: [\"64x48\"]\n")
	rc, out, errs = runPlanCLI("plan", "--grid", grid, v)
	if rc != 0 || !strings.Contains(out, "(loader lmms-eval: positions as its reader numbers frames)") || !strings.Contains(out, "f4-loader-lmms-eval-64x48-raw") ||
		!strings.Contains(out, "  4 frames: 0 108 216 324\n") || !strings.Contains(out, "seeks unknown") {
		t.Fatalf("rc %d %s\n%s", rc, errs, out)
	}
	if rc, _, errs = runPlanCLI("plan", "--grid", grid, "--total-frames", "100", "--fps", "25"); rc != exitError || !strings.Contains(errs, "give a VIDEO") {
		t.Fatalf("loader grid without a video: rc %d %s", rc, errs)
	}
	if rc, out, _ := runPlanCLI("plan", "--list"); rc != 0 || !strings.Contains(out, "loader qwen-vl-utils ") || !strings.Contains(out, "(verified)") {
		t.Fatalf("--list: rc %d\n%s", rc, out)
	}
}

// TestExtractLoaderGrid: a grid's loader: key builds objects from the loader's frames; the key, the
// object's metadata and the manifest name the loader; a second run finds them; framesweep's own
// configs keep their keys; options a loader decides itself are usage errors naming the grid.
func TestExtractLoaderGrid(t *testing.T) {
	v := testdataVideo(t, "nasa_13013.mp4")
	grid := exWriteGrid(t, "loader: lmms-eval\nframes: [4]\nresolutions: [\"64x48\"]\n")
	out := t.TempDir()
	code, sum, errs := exRun(t, "--grid", grid, "--out", out, "--videos", v)
	if code != 0 || sum.ObjectsWritten != 1 || sum.PairsFailed != 0 {
		t.Fatalf("exit %d %+v %s", code, sum, errs)
	}
	b, err := os.ReadFile(mustGlob(t, filepath.Join(out, "cas", "sha256", "*", "*")))
	if err != nil {
		t.Fatal(err)
	}
	f, err := cache.ParseSafetensors(b)
	if err != nil {
		t.Fatal(err)
	}
	m := f.Metadata
	if m["loader"] != "lmms-eval" || m["config"] != "f4-loader-lmms-eval-64x48-raw" || m["stream_index"] != "0" || m["indices"] != "[0,108,216,324]" ||
		!strings.Contains(m["key_spec"], `"loader":"lmms-eval","loader_request":"{\"frames\":4}"`) || !strings.Contains(m["loader_result"], `"count_from":"header"`) {
		t.Fatalf("metadata %v", m)
	}
	man, _ := filepath.Glob(filepath.Join(out, "manifests", "*.jsonl"))
	mb, _ := os.ReadFile(man[0])
	if !strings.Contains(string(mb), `"loader":"lmms-eval"`) {
		t.Fatalf("manifest %s", mb)
	}
	if code, sum, errs = exRun(t, "--grid", grid, "--out", out, "--videos", v); code != 0 || sum.ObjectsSkipped != 1 || sum.ObjectsWritten != 0 {
		t.Fatalf("second run: exit %d %+v %s", code, sum, errs)
	}
	for _, extra := range [][]string{{"--worker"}, {"--stream", "0"}, {"--no-autorotate"}, {"--pipeline", "cached"}} {
		code, _, errs := exRun(t, append([]string{"--grid", grid, "--out", t.TempDir(), "--videos", v}, extra...)...)
		if code != exitUsage || !strings.Contains(errs, grid) || !strings.Contains(errs, "loader lmms-eval") {
			t.Errorf("%v: exit %d %q", extra, code, errs)
		}
	}
}
