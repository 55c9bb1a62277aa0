package serve

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// TestTruncatedFilePlanAgreesWithFrames: for a file cut short (an MP4 whose moov comes first, cut
// inside its media data, so its last packet is partial; a WebM cut in its clusters), /v1/plan and
// /v1/frames answer with the same status for every harness loader (the index readers once planned
// 200 a frame that then failed to decode, 422; a cut WebM's plan was a 500 for an infinite duration),
// and no answer names /proc/self/fd/N instead of the video.
func TestTruncatedFilePlanAgreesWithFrames(t *testing.T) {
	ffmpeg := testenv.Need(t, "ffmpeg")
	root := t.TempDir()
	fast := filepath.Join(t.TempDir(), "fast.mov")
	if out, err := exec.Command(ffmpeg, "-v", "error", "-y", "-i", filepath.Join(testVideos(t), "video_90.mov"), "-c", "copy", "-movflags", "+faststart", fast).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	cut := func(src, name string, frac float64) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), b[:int(float64(len(b))*frac)], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cut(fast, "cut.mov", 0.9)
	cut(filepath.Join(testVideos(t), "bear-vp9-odd-dimensions.webm"), "cut.webm", 0.4)
	_, url := start(t, Config{Roots: []string{root}})
	for _, video := range []string{"cut.mov", "cut.webm"} {
		for _, l := range []string{"lmms-eval", "lmms-eval/torchcodec", "qwen-vl-utils", "qwen-vl-utils/decord", "vlmevalkit"} {
			body := `{"video":"` + video + `","loader":"` + l + `","frames":2}`
			p, f := post(t, url, "/v1/plan", body), post(t, url, "/v1/frames", body)
			if p.status != f.status || p.status >= 500 {
				t.Errorf("%s %s: plan %d, frames %d (%.200s | %.200s)", video, l, p.status, f.status, p.body, f.body)
			}
			for _, r := range []resp{p, f} {
				if bytes.Contains(r.body, []byte("/proc/self/fd")) {
					t.Errorf("%s %s: an answer names the descriptor: %.300s", video, l, r.body)
				}
			}
		}
	}
}
