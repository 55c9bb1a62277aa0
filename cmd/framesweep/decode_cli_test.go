package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

func runDecodeCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestProbeCLI(t *testing.T) {
	v := testenv.SharedVideo(t, "decord/video_90.mov")
	code, out, errs := runDecodeCLI("probe", v, "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"path", "container", "codec", "pix_fmt", "width", "height", "rotation", "frames",
		"frames_header", "fps", "duration_s", "start_s", "keyframes", "vfr", "orientation", "hwaccel"} {
		if _, ok := m[k]; !ok {
			t.Errorf("probe JSON lacks %q", k)
		}
	}
	if _, ok := m["pts_s"]; ok {
		t.Errorf("pts_s without --frames-detail")
	}
	if m["frames"].(float64) != 3 || m["rotation"].(float64) != -90 || m["codec"] != "h264" {
		t.Errorf("probe: %s", out)
	}
	code, out, _ = runDecodeCLI("probe", "--frames-detail", v)
	if code != exitOK || !strings.Contains(out, `"pts_s"`) || !strings.Contains(out, `"key"`) {
		t.Fatalf("--frames-detail: exit %d\n%s", code, out)
	}
	code, out, _ = runDecodeCLI("probe", v)
	if code != exitOK || !strings.Contains(out, "frames 3") {
		t.Fatalf("human summary: exit %d\n%s", code, out)
	}
	code, _, errs = runDecodeCLI("probe", v, "--hwaccel", "cuda", "--json")
	if code != exitOK {
		t.Fatalf("--hwaccel cuda must fall back, got exit %d: %s", code, errs)
	}
	// A broken file → 1 with one line naming the file (bad usage: TestUsageErrors).
	bad := testenv.SharedVideo(t, "androidx-media/sample_audio_only.mp4")
	code, _, errs = runDecodeCLI("probe", bad)
	if code != exitError || !strings.Contains(errs, bad) || !strings.Contains(errs, "no video stream") || strings.Count(errs, "\n") != 1 {
		t.Errorf("audio-only: exit %d, stderr %q", code, errs)
	}
}

func TestFramesCLI(t *testing.T) {
	t.Parallel()
	v := testenv.SharedVideo(t, "torchcodec/h265_video.mp4")
	dir := t.TempDir()
	code, out, errs := runDecodeCLI("frames", v, "--indices", "5,0,5,9", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res extract.FramesResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Written) != 3 {
		t.Fatalf("result %s (%v)", out, err)
	}
	vid, err := decode.Open(v, decode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer vid.Close()
	if _, err := vid.Read([]int{0, 5, 9}, func(f *decode.Frame) error {
		name := filepath.Join(dir, []string{"000000.png", "000005.png", "000009.png"}[map[int]int{0: 0, 5: 1, 9: 2}[f.Index]])
		raw, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		if raw[25] != 2 { // IHDR colour type 2 = RGB
			t.Errorf("%s: PNG colour type %d, want RGB", name, raw[25])
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			return err
		}
		for y := 0; y < f.H; y++ {
			for x := 0; x < f.W; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				p := f.Pix[y*f.Stride+3*x:]
				if byte(r>>8) != p[0] || byte(g>>8) != p[1] || byte(b>>8) != p[2] {
					t.Fatalf("%s differs from the decoded frame at %d,%d", name, x, y)
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Past the end → exit 1 naming the file, nothing written.
	dir2 := t.TempDir()
	code, _, errs = runDecodeCLI("frames", v, "--indices", "0,10", "--out", dir2)
	if code != exitError || !strings.Contains(errs, v) || !strings.Contains(errs, "out of range") {
		t.Errorf("past the end: exit %d, %q", code, errs)
	}
	if ents, _ := os.ReadDir(dir2); len(ents) != 0 {
		t.Errorf("past the end wrote %d files", len(ents))
	}
	// A frame that fails mid-stream is reported by index; the others are written.
	broken := testenv.SharedVideo(t, "decord/corrupted.mp4")
	dir3 := t.TempDir()
	code, _, errs = runDecodeCLI("frames", broken, "--indices", "29,30,31", "--out", dir3)
	if code != exitError || !strings.Contains(errs, "30") || !strings.Contains(errs, broken) {
		t.Errorf("corrupted: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir3, "000030.png")); err == nil {
		t.Errorf("a failed frame was written")
	}
	if _, err := os.Stat(filepath.Join(dir3, "000031.png")); err != nil {
		t.Errorf("frame 31 after the failed one was not written: %v", err)
	}
}

// TestBinaryOneLineErrors runs the built binary (FRAMESWEEP_BIN as `make test` sets it, or one built
// here): FFmpeg writes to the process's stderr directly, so only a real process shows that a handled
// error is exactly one line.
func TestBinaryOneLineErrors(t *testing.T) {
	t.Parallel()
	bin := testenv.Binary(t)
	broken := testenv.SharedVideo(t, "decord/corrupted.mp4")
	for _, args := range [][]string{
		{"probe", testenv.SharedVideo(t, "mp4ff/vvc_400kbps_2s.mp4")},
		{"probe", testenv.SharedVideo(t, "androidx-media/sample_malformed_free_box.mp4")},
		{"frames", broken, "--indices", "29,30,31", "--out", t.TempDir()},
		{"frames", testenv.SharedVideo(t, "androidx-media/invalid-bitstream.webm"), "--indices", "0,1", "--out", t.TempDir()},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "FRAMESWEEP_FFMPEG_LOG=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitError {
			t.Errorf("%v: %v, want exit 1", args, err)
		}
		if s := stderr.String(); strings.Count(s, "\n") != 1 || !strings.Contains(s, args[1]) {
			t.Errorf("%v: stderr is not one line naming the file: %q", args, s)
		}
	}
}

// TestProbeFramesStreamCLI: the default stream is FFmpeg's best (stream 3 of the NASA clip, 480x270);
// --stream picks another; a stream that is audio is exit 1 naming the file, a negative one bad usage.
func TestProbeFramesStreamCLI(t *testing.T) {
	t.Parallel()
	v := testenv.SharedVideo(t, "torchcodec/nasa_13013.mp4")
	probe := func(args ...string) decode.Info {
		t.Helper()
		code, out, errs := runDecodeCLI(append([]string{"probe", v, "--json"}, args...)...)
		if code != exitOK {
			t.Fatalf("probe %v: exit %d: %s", args, code, errs)
		}
		var in decode.Info
		if err := json.Unmarshal([]byte(out), &in); err != nil {
			t.Fatal(err)
		}
		return in
	}
	if in := probe(); in.StreamIndex != 3 || in.StreamSelection != "best" || in.Width != 480 || in.Frames != 390 {
		t.Errorf("default: stream %d (%s) %dx%d, %d frames; want stream 3, 480x270, 390 frames", in.StreamIndex, in.StreamSelection, in.Width, in.Height, in.Frames)
	}
	if in := probe("--stream", "0"); in.StreamIndex != 0 || in.StreamSelection != "requested" || in.Width != 320 || in.Frames != 325 {
		t.Errorf("--stream 0: stream %d (%s) %dx%d, %d frames", in.StreamIndex, in.StreamSelection, in.Width, in.Height, in.Frames)
	}
	code, out, _ := runDecodeCLI("probe", v)
	if code != exitOK || !strings.Contains(out, "stream 3 (best; video streams [0 3])") {
		t.Errorf("summary: %s", out)
	}
	code, _, errs := runDecodeCLI("probe", v, "--stream", "1")
	if code != exitError || !strings.Contains(errs, v) || !strings.Contains(errs, "stream 1 is audio") || strings.Count(errs, "\n") != 1 {
		t.Errorf("--stream 1 (audio): exit %d, %q", code, errs)
	}
	dir := t.TempDir()
	code, out, errs = runDecodeCLI("frames", v, "--indices", "0,389", "--out", dir)
	var res extract.FramesResult
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil || res.StreamIndex != 3 || len(res.Written) != 2 {
		t.Fatalf("frames (best stream): exit %d %s %s", code, out, errs)
	}
	if img := readPNG(t, res.Written[1]); img.W != 480 || img.H != 270 {
		t.Errorf("frame 389 is %dx%d, want the 480x270 stream's", img.W, img.H)
	}
	code, out, _ = runDecodeCLI("frames", v, "--indices", "0", "--out", t.TempDir(), "--stream", "0")
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil || res.StreamIndex != 0 || readPNG(t, res.Written[0]).W != 320 {
		t.Errorf("frames --stream 0: exit %d %s", code, out)
	}
}

// TestFramesOnDamagedCLI: decord's corrupted.mp4 has a frame FFmpeg conceals (32, beside frame 30
// that does not decode at all). By default it is refused: exit 1 naming the file and the frame, not
// written, the others written, stats.damaged lists it; --on-damaged keep writes it and exits 0.
func TestFramesOnDamagedCLI(t *testing.T) {
	t.Parallel()
	v := testenv.SharedVideo(t, "decord/corrupted.mp4")
	dir := t.TempDir()
	code, out, errs := runDecodeCLI("frames", v, "--indices", "31,32,33", "--out", dir)
	if code != exitError || !strings.Contains(errs, v) || !strings.Contains(errs, "damaged frame(s) refused: 32 ") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("default (fail): exit %d, %q", code, errs)
	}
	var res extract.FramesResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("partial result not JSON: %v\n%s", err, out)
	}
	if fmt.Sprint(res.Stats.Damaged) != "[32]" || res.Stats.OnDamaged != "fail" || fmt.Sprint(res.Indices) != "[31 33]" {
		t.Errorf("fail: stats %+v, written %v", res.Stats, res.Indices)
	}
	if _, err := os.Stat(filepath.Join(dir, "000032.png")); err == nil {
		t.Errorf("the damaged frame was written under --on-damaged fail")
	}
	dir = t.TempDir()
	code, out, errs = runDecodeCLI("frames", v, "--indices", "31,32,33", "--out", dir, "--on-damaged", "keep")
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("keep: exit %d, %s %s", code, out, errs)
	}
	if fmt.Sprint(res.Stats.Damaged) != "[32]" || res.Stats.OnDamaged != "keep" || len(res.Written) != 3 {
		t.Errorf("keep: stats %+v, written %v", res.Stats, res.Written)
	}
}

// TestProbeRefusesPlaylistCLI: an HLS playlist named .mp4 beside a real video is exit 1 with one line
// saying what it is.
func TestProbeRefusesPlaylistCLI(t *testing.T) {
	v := testenv.SharedVideo(t, "torchcodec/h265_video.mp4")
	dir := t.TempDir()
	abs, _ := filepath.Abs(v)
	pl := filepath.Join(dir, "x.mp4")
	body := "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:2.0,\n" + abs + "\n#EXT-X-ENDLIST\n"
	if err := os.WriteFile(pl, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runDecodeCLI("probe", pl)
	if code != exitError || errs != "framesweep probe: "+pl+": open: an HLS playlist, not a media file: refused (its demuxer opens the media files it names)\n" {
		t.Errorf("exit %d, %q", code, errs)
	}
}
