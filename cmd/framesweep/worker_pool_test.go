package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/extract"
)

// TestExtractWorkerPoolStarts: `extract --worker --jobs 1` over three videos starts the binary at most
// twice — itself and one pooled worker that decodes every video (each worker appends its pid to
// $FRAMESWEEP_WORKER_STARTS when the test ops are on: internal/engine/worker's start log) — and
// writes the objects in-process extract writes.
func TestExtractWorkerPoolStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := exBinary(t)
	grid := exWriteGrid(t, "frames: [2, 3]\npolicies: [uniform]\nresolutions: [\"40x24\"]\n")
	dir := filepath.Join(repoDir(t), "testdata", "videos")
	videos := []string{filepath.Join(dir, "nasa_13013.mp4"), filepath.Join(dir, "video_90.mov"), filepath.Join(dir, "h265_video.mp4")}
	inproc, pooled := t.TempDir(), t.TempDir()
	if code, s, e := exRun(t, append([]string{"--grid", grid, "--out", inproc, "--videos"}, videos...)...); code != exitOK || s.ObjectsWritten != 6 {
		t.Fatalf("in process: exit %d %+v %s", code, s, e)
	}
	starts := filepath.Join(t.TempDir(), "starts")
	cmd := exec.Command(bin, append([]string{"extract", "--grid", grid, "--out", pooled, "--worker", "--jobs", "1", "--videos"}, videos...)...)
	cmd.Env = append(os.Environ(), "FRAMESWEEP_WORKER_TESTOPS=1", "FRAMESWEEP_WORKER_STARTS="+starts)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var sum extract.Summary
	if jerr := json.Unmarshal(stdout.Bytes(), &sum); err != nil || jerr != nil || sum.ObjectsWritten != 6 || sum.VideosFailed != 0 {
		t.Fatalf("extract --worker --jobs 1: %v %v %+v\n%s", err, jerr, sum, stderr.String())
	}
	b, err := os.ReadFile(starts)
	if err != nil {
		t.Fatalf("no worker recorded its start: %v", err)
	}
	workers := len(strings.Fields(string(b)))
	if workers < 1 || 1+workers > 2 {
		t.Errorf("extract --worker --jobs 1 over 3 videos started the binary %d times (itself and %d workers), want at most 2", 1+workers, workers)
	}
	t.Logf("binary starts: 1 + %d worker(s)", workers)
	exSameTree(t, exTree(t, inproc), exTree(t, pooled))
}
