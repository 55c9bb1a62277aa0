package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/decode"
)

func sharedVideo(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "testdata", "videos", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared test videos not found (%v)", err)
	}
	return p
}

func runDecodeCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestProbeCLI(t *testing.T) {
	v := sharedVideo(t, "decord/video_90.mov")
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
	// Bad usage → 2; a broken file → 1 with one line naming the file.
	if code, _, _ := runDecodeCLI("probe"); code != exitUsage {
		t.Errorf("no VIDEO: exit %d", code)
	}
	if code, _, _ := runDecodeCLI("probe", v, "--hwaccel", "warp"); code != exitUsage {
		t.Errorf("bad --hwaccel: exit %d", code)
	}
	bad := sharedVideo(t, "androidx-media/sample_audio_only.mp4")
	code, _, errs = runDecodeCLI("probe", bad)
	if code != exitError || !strings.Contains(errs, bad) || !strings.Contains(errs, "no video stream") || strings.Count(errs, "\n") != 1 {
		t.Errorf("audio-only: exit %d, stderr %q", code, errs)
	}
}

func TestFramesCLI(t *testing.T) {
	v := sharedVideo(t, "torchcodec/h265_video.mp4")
	dir := t.TempDir()
	code, out, errs := runDecodeCLI("frames", v, "--indices", "5,0,5,9", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res framesResult
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
	for _, args := range [][]string{{"frames", v, "--out", dir}, {"frames", v, "--indices", "0"}, {"frames", v, "--indices", "a", "--out", dir}} {
		if code, _, _ := runDecodeCLI(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	// A frame that fails mid-stream is reported by index; the others are written.
	broken := sharedVideo(t, "decord/corrupted.mp4")
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

// TestBinaryOneLineErrors runs the built binary (FRAMESWEEP_BIN, set by `make test`): FFmpeg writes to
// the process's stderr directly, so only a real process shows that a handled error is exactly one line.
func TestBinaryOneLineErrors(t *testing.T) {
	bin := os.Getenv("FRAMESWEEP_BIN")
	if bin == "" {
		t.Skip("FRAMESWEEP_BIN not set (make test sets it to the built binary)")
	}
	broken := sharedVideo(t, "decord/corrupted.mp4")
	for _, args := range [][]string{
		{"probe", sharedVideo(t, "mp4ff/vvc_400kbps_2s.mp4")},
		{"probe", sharedVideo(t, "androidx-media/sample_malformed_free_box.mp4")},
		{"frames", broken, "--indices", "29,30,31", "--out", t.TempDir()},
		{"frames", sharedVideo(t, "androidx-media/invalid-bitstream.webm"), "--indices", "0,1", "--out", t.TempDir()},
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
