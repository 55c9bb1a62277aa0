package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/framesweep/framesweep/bench"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// TestBenchDecodeAndMemory runs two modes on a small real video and checks their JSON rows.
func TestBenchDecodeAndMemory(t *testing.T) {
	t.Parallel()
	video := testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4")
	var out, errb bytes.Buffer
	if code := dispatch([]string{"bench", "decode", "--video", video, "--threads", "1", "--json", "--quiet"}, &out, &errb); code != exitOK {
		t.Fatalf("bench decode: exit %d: %s", code, errb.String())
	}
	var rows []bench.Row
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("bench decode: %d rows, %v: %s", len(rows), err, out.String())
	}
	if v, ok := rows[1].Metric("served-frames"); !ok || v != 120 {
		t.Errorf("decode served %v frames, want 120", v)
	}
	if rows[0].Env.Commit == "" || rows[0].Env.CPUs < 1 {
		t.Errorf("row without environment: %+v", rows[0].Env)
	}

	out.Reset()
	errb.Reset()
	if code := dispatch([]string{"bench", "memory", "--video", video, "--frames", "8", "--size", "32x24", "--format", "csv"}, &out, &errb); code != exitOK {
		t.Fatalf("bench memory: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), ",output-MiB,") || !strings.Contains(out.String(), "frames=8/size=32x24") {
		t.Errorf("bench memory csv: %s", out.String())
	}

	out.Reset()
	errb.Reset()
	if code := dispatch([]string{"bench", "decode", "--video", "/no/such/video.mp4", "--quiet"}, &out, &errb); code != exitError {
		t.Fatalf("missing video: exit %d, want %d", code, exitError)
	}
	if !strings.Contains(errb.String(), "/no/such/video.mp4") || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
		t.Errorf("error line %q", errb.String())
	}
}

// needOracle skips a test whose oracle is missing, or fails it under CI=true (the CI image has them all).
func needOracle(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s missing under CI=true: %v", what, err)
	}
	t.Skipf("%s missing: %v", what, err)
}

// TestBenchPeers runs `bench peers` once (--reps 1) on a tiny generated clip and a 4-config grid (two
// budgets × two sizes) and checks the structure: a row per peer and a summary, every Python peer
// serving the plan's indices with its frames compared against framesweep's (PSNR), ratios against
// framesweep on every peer row, rusage figures. Not timed. Then a peer that cannot start is a failed
// row and exit status 1 with one line.
func TestBenchPeers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs Python peers")
	}
	py := peersOracles(t)
	bin := testenv.Binary(t)
	dir := t.TempDir()
	clip, err := bench.EnsureClip(context.Background(), dir, bench.Clip{Seconds: 2, Width: 160, Height: 96, FPS: 30, GOP: 12, Codec: "h264", Bits: 8})
	if err != nil {
		t.Fatal(err)
	}
	grid := filepath.Join(dir, "grid.yaml")
	if err := os.WriteFile(grid, []byte("frames: [4, 8]\npresets: [lmms-eval]\nresolutions: [\"64x48\", \"32x32\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"bench", "peers", "--video", clip, "--grid", grid, "--reps", "1", "--framesweep", bin, "--python", py, "--json", "--quiet"}
	if code := dispatch(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("bench peers: exit %d: %s\n%s", code, stderr.String(), stdout.String())
	}
	var rows []bench.Row
	if err := json.Unmarshal(stdout.Bytes(), &rows); err != nil {
		t.Fatalf("rows: %v: %s", err, stdout.String())
	}
	byPeer := map[string]bench.Row{}
	for _, r := range rows {
		byPeer[r.Name[strings.LastIndex(r.Name, "/")+1:]] = r
	}
	for _, p := range append(bench.PeerNames, "summary") {
		key := "peer=" + p
		if p == "summary" {
			key = p
		}
		r, ok := byPeer[key]
		if !ok {
			t.Fatalf("no row for %s: %s", key, stdout.String())
		}
		if r.Failure != "" {
			t.Errorf("%s failed: %s", key, r.Failure)
		}
		if p == "summary" {
			continue
		}
		for _, m := range []string{"cpu-s", "peak-rss-MiB"} {
			if v, ok := r.Metric(m); !ok || v <= 0 {
				t.Errorf("%s: %s = %v", key, m, v)
			}
		}
		if r.Seconds <= 0 {
			t.Errorf("%s: wall %v", key, r.Seconds)
		}
		for _, m := range []string{"stream", "load1-before", "load1-after", "pairs-under-load"} {
			if v, ok := r.Metric(m); !ok || v < 0 || (m == "stream" && v != 0) {
				t.Errorf("%s: %s = %v (present %v)", key, m, v, ok)
			}
		}
		if p == bench.PeerFramesweep {
			if v, _ := r.Metric("frames-requested"); v != 24 { // (4 + 8) × 2 sizes
				t.Errorf("framesweep requested %v frames, want 24", v)
			}
			continue
		}
		if v, ok := r.Metric("x-framesweep-wall"); !ok || v <= 0 {
			t.Errorf("%s: no ratio against framesweep", key)
		}
		want, _ := byPeer["summary"].Metric("x-framesweep/" + p)
		if got, _ := r.Metric("x-framesweep-wall"); got != want || want == 0 {
			t.Errorf("%s: summary ratio %v, row ratio %v", key, want, got)
		}
		if p == bench.PeerFFmpeg {
			continue
		}
		if v, ok := r.Metric("indices-match"); !ok || v != 1 {
			t.Errorf("%s: indices-match %v", key, v)
		}
		if v, _ := r.Metric("frames-compared"); v != 24 {
			t.Errorf("%s: %v frames compared, want 24", key, v)
		}
		// The same frames of an 8-bit 4:2:0 clip: equal or within conversion rounding, never a neighbour.
		if v, ok := r.Metric("psnr-min-dB"); !ok || v < 30 {
			t.Errorf("%s: PSNR min %v dB against framesweep", key, v)
		}
		if !strings.Contains(r.Note, "python") {
			t.Errorf("%s: note without versions: %q", key, r.Note)
		}
	}

	stdout.Reset()
	stderr.Reset()
	args = []string{"bench", "peers", "--video", clip, "--grid", grid, "--peers", "pyav-once", "--framesweep", bin,
		"--python", filepath.Join(dir, "no-python"), "--json", "--quiet"}
	if code := dispatch(args, &stdout, &stderr); code != exitError {
		t.Fatalf("missing python: exit %d, want %d: %s", code, exitError, stderr.String())
	}
	if msg := strings.TrimSpace(stderr.String()); strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "pyav-once") {
		t.Errorf("error line %q", msg)
	}
	if !strings.Contains(stdout.String(), `"failure"`) {
		t.Errorf("no failed row printed: %s", stdout.String())
	}
}

// peersOracles checks what `bench peers` runs besides framesweep (skip, or fail under CI=true) and
// returns the Python interpreter.
func peersOracles(t *testing.T) string {
	t.Helper()
	_, err := exec.LookPath("ffmpeg")
	needOracle(t, "the ffmpeg CLI", err)
	py := bench.DefaultPython()
	out, err := exec.Command(py, "-c", "import av, cv2, numpy, PIL").CombinedOutput()
	if err != nil {
		err = fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
	}
	needOracle(t, py+" with av, cv2, numpy, PIL", err)
	_, err = os.Stat("/usr/bin/time")
	needOracle(t, "GNU time (the peak RSS of each peer)", err)
	return py
}

// peersRows runs `bench peers` with args (plus --json --quiet) and returns its rows by the last part
// of their name ("peer=pyav-once", "summary"); it fails the test unless the exit status is want.
func peersRows(t *testing.T, want int, args ...string) map[string]bench.Row {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append([]string{"bench", "peers"}, append(args, "--json", "--quiet")...)
	if code := dispatch(args, &stdout, &stderr); code != want {
		t.Fatalf("bench peers %v: exit %d, want %d: %s\n%s", args, code, want, stderr.String(), stdout.String())
	}
	var rows []bench.Row
	if err := json.Unmarshal(stdout.Bytes(), &rows); err != nil {
		t.Fatalf("rows: %v: %s", err, stdout.String())
	}
	by := map[string]bench.Row{}
	for _, r := range rows {
		by[r.Name[strings.LastIndex(r.Name, "/")+1:]] = r
	}
	return by
}

// TestBenchPeersStream: on a file with two video streams (nasa_13013.mp4: stream 0 is 320x180 with
// 325 frames, stream 3 — FFmpeg's best — 480x270 with 390) every peer decodes framesweep's stream and
// says so; OpenCV, which reads only the first video stream, is refused with one line and the run
// passes; with --stream 0 every peer, OpenCV included, decodes stream 0. The plan's last frame, 389,
// exists only in stream 3, so a PyAV peer reading stream 0 fails its check run.
func TestBenchPeersStream(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs Python peers")
	}
	py := peersOracles(t)
	bin := testenv.Binary(t)
	video, err := filepath.Abs("../../testdata/videos/nasa_13013.mp4")
	if err != nil {
		t.Fatal(err)
	}
	grid := filepath.Join(t.TempDir(), "grid.yaml")
	if err := os.WriteFile(grid, []byte("frames: [4, 8]\npresets: [lmms-eval]\nresolutions: [\"64x48\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--video", video, "--grid", grid, "--reps", "1", "--framesweep", bin, "--python", py}
	checkStream := func(rows map[string]bench.Row, stream float64, peers ...string) {
		t.Helper()
		for _, p := range peers {
			r, ok := rows["peer="+p]
			if !ok || r.Failure != "" || r.Skipped != "" {
				t.Errorf("stream %v: %s: row %+v", stream, p, r)
				continue
			}
			if v, _ := r.Metric("stream"); v != stream {
				t.Errorf("%s decoded stream %v, want %v", p, v, stream)
			}
			if v, ok := r.Metric("indices-match"); ok && v != 1 {
				t.Errorf("stream %v: %s served other indices", stream, p)
			}
			if v, ok := r.Metric("psnr-min-dB"); ok && v < 30 { // the BT.709 matrix apart (≈ 41 dB), the same frames
				t.Errorf("stream %v: %s is %.1f dB from framesweep's frames", stream, p, v)
			}
		}
		if v, _ := rows["summary"].Metric("stream"); v != stream {
			t.Errorf("summary stream %v, want %v", v, stream)
		}
	}

	rows := peersRows(t, exitOK, common...)
	checkStream(rows, 3, bench.PeerFramesweep, bench.PeerPyAVPerConfig, bench.PeerPyAVOnce, bench.PeerFFmpeg, bench.PeerPyAVSeek)
	if v, _ := rows["peer="+bench.PeerPyAVOnce].Metric("decoded-frames"); v != 390 { // to frame 389 of stream 3
		t.Errorf("pyav-once decoded %v frames, want 390", v)
	}
	cv := rows["peer="+bench.PeerOpenCV]
	if cv.Failure != "" || strings.Contains(cv.Skipped, "\n") || !strings.Contains(cv.Skipped, "cannot open stream 3") ||
		!strings.Contains(cv.Skipped, "first video stream (0)") {
		t.Errorf("opencv-seek: skipped %q, failure %q", cv.Skipped, cv.Failure)
	}
	if n := rows["summary"].Note; !strings.Contains(n, "stream 3 (best of video streams [0 3])") || !strings.Contains(n, "opencv-seek refused") {
		t.Errorf("summary note %q", n)
	}

	rows = peersRows(t, exitOK, append(common, "--stream", "0", "--peers", "opencv-seek,ffmpeg-decode")...)
	checkStream(rows, 0, bench.PeerFramesweep, bench.PeerOpenCV, bench.PeerFFmpeg)
	if n := rows["summary"].Note; !strings.Contains(n, "stream 0 (requested of video streams [0 3])") {
		t.Errorf("summary note %q", n)
	}
	var stderr bytes.Buffer
	if code := dispatch(append([]string{"bench", "peers"}, append(common, "--stream", "1", "--quiet")...), io.Discard, &stderr); code != exitError ||
		strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 || !strings.Contains(stderr.String(), "stream 1") {
		t.Errorf("--stream 1 (audio): exit %d, stderr %q", code, stderr.String())
	}
}

// TestGPUScript checks bench/gpu/run.sh without a GPU: its syntax, its usage error, the decisions in
// verdict.py on synthetic outcomes (GPU used and matching, AV1 decoded by the device but not by
// framesweep, frame-count and PSNR mismatches), and, unless -short, the whole script in --self-test
// mode within 2 minutes: every section under its box (the preflight naming each missing piece, then
// finding a stand-in CUDA 12 host; every decode falling back to the CPU with exact frames; the model
// refused on the stand-in GPU by its CUDA 12 build; concurrent streams), a section that overruns its
// box cut off, and the summary table.
func TestGPUScript(t *testing.T) {
	const script = "../../bench/gpu/run.sh"
	if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v: %s", err, out)
	}
	cmd := exec.Command("bash", script, "--bogus")
	cmd.Env = append(os.Environ(), "FRAMESWEEP_GPU_TIMED=1")
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("bad argument: %v, want exit 2", err)
	}
	py := bench.DefaultPython()
	_, err := exec.LookPath(py)
	needOracle(t, "python3", err)
	out, err := exec.Command(py, "../../bench/gpu/verdict.py", "self-test").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0 wrong") {
		t.Fatalf("verdict.py self-test: %v: %s", err, out)
	}
	if testing.Short() {
		t.Skip("the --self-test run encodes clips and runs the binary (about 20 s on 2 cores)")
	}
	_, err = exec.LookPath("ffmpeg")
	needOracle(t, "the ffmpeg CLI", err)
	testenv.Need(t, "gcc") // the stand-in CUDA libraries
	cmd = exec.Command("bash", script, "--self-test")
	cmd.Env = append(os.Environ(), "FRAMESWEEP_BIN="+testenv.Binary(t), "OUT="+t.TempDir(), "FRAMESWEEP_BENCH_CACHE="+t.TempDir(), "PYTHON="+py)
	start := time.Now()
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run.sh --self-test: %v\n%s", err, b)
	}
	if took := time.Since(start); took > 2*time.Minute {
		t.Errorf("--self-test took %s, want ≤ 2 min", took)
	}
	s := string(b)
	for _, want := range []string{"doctor without a GPU: exit 1", "doctor on the stand-in CUDA 12 host: exit 0, CUDA 12 build",
		"streams hw=cuda n=4", "streams hw=none n=1", "latency per stream median", "decoder creation: first frame cuda",
		"ok llama.cpp in process: choice cuda=", "device=cuda0 on the stand-in CUDA 12 host refused by name: cuda/12/libggml-cuda.so",
		"overrun    cut-ok", "section    status    seconds    box  detail", "bench/gpu: all sections passed"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	for _, sec := range []string{"preflight", "nvdec", "model", "streams"} {
		if !regexp.MustCompile(`(?m)^` + sec + ` +ok `).MatchString(s) {
			t.Errorf("no passing summary row for %s:\n%s", sec, s)
		}
	}
	for _, codec := range []string{"h264-8bit", "h264-10bit", "hevc-8bit", "hevc-10bit", "vp9-8bit", "av1-8bit"} {
		if !strings.Contains(s, "  ok "+codec+": expected=") && !strings.Contains(s, "  WARN "+codec+": expected=") {
			t.Errorf("no passing check line for %s:\n%s", codec, s)
		}
	}
}
