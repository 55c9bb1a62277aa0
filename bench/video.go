package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// ErrFFmpeg reports that the ffmpeg CLI (fixture generator and baseline) failed or is missing.
var ErrFFmpeg = errors.New("ffmpeg CLI failed")

// Clip describes a generated benchmark video.
type Clip struct {
	Seconds int    // duration
	Width   int    // 1920
	Height  int    // 1080
	FPS     int    // 30
	GOP     int    // keyframe interval in frames (-g)
	Codec   string // "h264" (libx264), "hevc" (libx265), "vp9" (libvpx), "av1" (libaom)
	Bits    int    // 8 or 10
}

// Frames is the clip's frame count.
func (c Clip) Frames() int { return c.Seconds * c.FPS }

func (c Clip) name() string {
	return fmt.Sprintf("testsrc2-%dx%d-%dfps-%ds-%s-%dbit-gop%d.mkv", c.Width, c.Height, c.FPS, c.Seconds, c.Codec, c.Bits, c.GOP)
}

// BenchClip is the benchmark video: 60 s of 1080p30 H.264 at the given GOP.
func BenchClip(gop int) Clip {
	return Clip{Seconds: 60, Width: 1920, Height: 1080, FPS: 30, GOP: gop, Codec: "h264", Bits: 8}
}

// CacheDir is where generated clips are kept between runs: $FRAMESWEEP_BENCH_CACHE, else
// <user cache dir>/framesweep/bench.
func CacheDir() string {
	if d := os.Getenv("FRAMESWEEP_BENCH_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "framesweep", "bench")
	}
	return filepath.Join(os.TempDir(), "framesweep-bench")
}

// EnsureClip returns the path of clip in dir, generating it with the ffmpeg CLI when missing. The file is
// written under a temporary name and renamed, so an interrupted run never leaves a half clip behind.
func EnsureClip(ctx context.Context, dir string, c Clip) (string, error) {
	path := filepath.Join(dir, c.name())
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	args := []string{"-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi",
		"-i", fmt.Sprintf("testsrc2=size=%dx%d:rate=%d", c.Width, c.Height, c.FPS), "-t", strconv.Itoa(c.Seconds)}
	pix := "yuv420p"
	if c.Bits == 10 {
		pix = "yuv420p10le"
	}
	switch c.Codec {
	case "h264":
		args = append(args, "-c:v", "libx264", "-preset", "veryfast", "-g", strconv.Itoa(c.GOP))
	case "hevc":
		args = append(args, "-c:v", "libx265", "-preset", "veryfast", "-x265-params", "log-level=error:keyint="+strconv.Itoa(c.GOP))
	case "vp9":
		args = append(args, "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "4M", "-g", strconv.Itoa(c.GOP))
		if c.Bits == 10 {
			args = append(args, "-profile:v", "2")
		}
	case "av1":
		args = append(args, "-c:v", "libaom-av1", "-cpu-used", "8", "-usage", "realtime", "-b:v", "4M", "-g", strconv.Itoa(c.GOP))
	default:
		return "", fmt.Errorf("bench: clip codec %q not supported", c.Codec)
	}
	// A unique temporary name: two processes generating the same clip (parallel test binaries, two
	// benches) each write their own file, and either rename leaves a complete clip.
	f, err := os.CreateTemp(dir, c.name()+".*.part.mkv")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_ = f.Close()
	args = append(args, "-pix_fmt", pix, tmp)
	cmd := exec.CommandContext(ctx, "ffmpeg", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("%s: %w: %v: %s", path, ErrFFmpeg, err, oneLine(string(out)))
	}
	_ = os.Chmod(tmp, 0o644) // CreateTemp made it 0600; a clip is as readable as ffmpeg would leave it
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	return path, nil
}
