package decode

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The ffmpeg/ffprobe CLIs are the oracles: frame counts, timestamps and RGB24 bytes.

// cliRGB returns the RGB24 frames `ffmpeg -i V -pix_fmt rgb24 -f rawvideo -` outputs (first video
// stream, no frame duplication or dropping), at most maxFrames of them when maxFrames > 0.
func cliRGB(t testing.TB, path string, noAutorotate bool, maxFrames int) []byte {
	t.Helper()
	return cliRGBMap(t, path, "0:v:0", noAutorotate, maxFrames)
}

// cliRGBMap is cliRGB for the streams -map selects ("" = the CLI's own default choice).
func cliRGBMap(t testing.TB, path, mapSpec string, noAutorotate bool, maxFrames int) []byte {
	t.Helper()
	args := []string{"-nostdin", "-v", "error"}
	if noAutorotate {
		args = append(args, "-noautorotate")
	}
	args = append(args, "-i", path)
	if mapSpec != "" {
		args = append(args, "-map", mapSpec)
	}
	args = append(args, "-fps_mode", "passthrough")
	if maxFrames > 0 {
		args = append(args, "-frames:v", strconv.Itoa(maxFrames))
	}
	args = append(args, "-pix_fmt", "rgb24", "-f", "rawvideo", "-")
	cmd := exec.Command("ffmpeg", args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out.Bytes()
}

// countFramesFFprobe is `ffprobe -count_frames` for the first video stream.
func countFramesFFprobe(t testing.TB, path string) int {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames",
		"-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe -count_frames %s: %v", path, err)
	}
	f := strings.FieldsFunc(string(out), func(r rune) bool { return r == ',' || r == '\n' || r == ' ' || r == '\r' })
	if len(f) == 0 {
		t.Fatalf("ffprobe -count_frames %s: no output", path)
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatalf("ffprobe -count_frames %s: %q", path, out)
	}
	return n
}

// ffprobeFramePTS returns the pts of every decoded frame of the first video stream, in output order.
func ffprobeFramePTS(t testing.TB, path string) []int64 {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
		"frame=pts", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe -show_frames %s: %v", path, err)
	}
	var pts []int64
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(strings.Split(l, ",")[0])
		if l == "" {
			continue
		}
		if l == "N/A" {
			pts = append(pts, -1<<63)
			continue
		}
		p, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			t.Fatalf("ffprobe pts %q", l)
		}
		pts = append(pts, p)
	}
	return pts
}
