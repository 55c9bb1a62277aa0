package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/serve"
)

// workerStarts is how many workers appended their pid to the start log (0 when none did).
func workerStarts(t *testing.T, log string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(strings.Fields(string(b)))
}

// startLogEnv turns on the workers' start log (a test hook of internal/engine/worker).
func startLogEnv(log string) []string {
	return []string{"FRAMESWEEP_WORKER_TESTOPS=1", "FRAMESWEEP_WORKER_STARTS=" + log}
}

// TestExtractWorkerPoolStarts: `extract --worker --jobs 1` over three videos starts the binary at most
// twice — itself and one pooled worker that decodes every video (each worker appends its pid to
// $FRAMESWEEP_WORKER_STARTS when the test ops are on: internal/engine/worker's start log) — and
// writes the objects in-process extract writes.
func TestExtractWorkerPoolStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testenv.Binary(t)
	grid := exWriteGrid(t, "frames: [2, 3]\npolicies: [uniform]\nresolutions: [\"40x24\"]\n")
	dir := filepath.Join(repoDir(t), "testdata", "videos")
	videos := []string{filepath.Join(dir, "nasa_13013.mp4"), filepath.Join(dir, "video_90.mov"), filepath.Join(dir, "h265_video.mp4")}
	inproc, pooled := t.TempDir(), t.TempDir()
	if code, s, e := exRun(t, append([]string{"--grid", grid, "--out", inproc, "--videos"}, videos...)...); code != exitOK || s.ObjectsWritten != 6 {
		t.Fatalf("in process: exit %d %+v %s", code, s, e)
	}
	starts := filepath.Join(t.TempDir(), "starts")
	cmd := exec.Command(bin, append([]string{"extract", "--grid", grid, "--out", pooled, "--worker", "--jobs", "1", "--videos"}, videos...)...)
	cmd.Env = append(os.Environ(), startLogEnv(starts)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var sum extract.Summary
	if jerr := json.Unmarshal(stdout.Bytes(), &sum); err != nil || jerr != nil || sum.ObjectsWritten != 6 || sum.VideosFailed != 0 {
		t.Fatalf("extract --worker --jobs 1: %v %v %+v\n%s", err, jerr, sum, stderr.String())
	}
	workers := workerStarts(t, starts)
	if workers < 1 || 1+workers > 2 {
		t.Errorf("extract --worker --jobs 1 over 3 videos started the binary %d times (itself and %d workers), want at most 2", 1+workers, workers)
	}
	t.Logf("binary starts: 1 + %d worker(s)", workers)
	exSameTree(t, exTree(t, inproc), exTree(t, pooled))
}

// TestSweepWorkerPool: `sweep --worker --jobs 2` over the demo (4 videos, 8 visual configs) decodes in
// at most two worker processes and records what an in-process sweep records.
func TestSweepWorkerPool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testenv.Binary(t)
	spec := swModel(t)
	inproc, pooled := filepath.Join(t.TempDir(), "run"), filepath.Join(t.TempDir(), "run")
	if rc, _, errs := runCLI(swArgs(spec, inproc)...); rc != exitOK {
		t.Fatalf("sweep: %s", errs)
	}
	starts := filepath.Join(t.TempDir(), "starts")
	cmd := exec.Command(bin, append(swArgs(spec, pooled)[:], "--worker")...)
	cmd.Env = append(os.Environ(), startLogEnv(starts)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sweep --worker: %v\n%s", err, out)
	}
	want, got := swRecords(t, inproc), swRecords(t, pooled)
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for k, w := range want {
		if g := got[k]; g.Status != "ok" || g.InputSHA256 != w.InputSHA256 || g.Prediction != w.Prediction {
			t.Errorf("%s: %+v, in process %+v", k, g, w)
		}
	}
	if n := workerStarts(t, starts); n < 1 || n > 2 {
		t.Errorf("sweep --worker --jobs 2 started %d workers, want 1 or 2", n)
	}
}

// TestServeWorkerPool: `serve --worker --max-inflight 2` answers requests for four videos, two at a
// time, from at most two worker processes, which end with the server (it exits 0 on SIGTERM).
func TestServeWorkerPool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testenv.Binary(t)
	videos, err := filepath.EvalSymlinks(filepath.Join(repoDir(t), "testdata", "videos"))
	if err != nil {
		t.Fatal(err)
	}
	starts := filepath.Join(t.TempDir(), "starts")
	for _, kv := range startLogEnv(starts) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	p := startServe(t, bin, "--root", videos, "--worker", "--max-inflight", "2")
	names := []string{"nasa_13013.mp4", "video_90.mov", "h265_video.mp4", "bear-vp9-odd-dimensions.webm"}
	var wg sync.WaitGroup
	status := make([]int, 2*len(names))
	for i := range status {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(serve.Request{Video: names[i%len(names)], Policy: "uniform", Frames: 2 + i/len(names), Resolution: "32x24"})
			for try := 0; try < 50; try++ { // a 503 while the slot of an answered request is let go
				res, err := http.Post(p.url+"/v1/frames", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				if status[i] = res.StatusCode; status[i] != http.StatusServiceUnavailable {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		if i%2 == 1 {
			wg.Wait() // two at a time: within --max-inflight
		}
	}
	wg.Wait()
	for i, s := range status {
		if s != http.StatusOK {
			t.Errorf("request %d (%s): status %d; stderr %s", i, names[i%len(names)], s, p.stderr)
		}
	}
	if n := workerStarts(t, starts); n < 1 || n > 2 {
		t.Errorf("serve --worker --max-inflight 2 started %d workers for %d requests, want 1 or 2", n, len(status))
	}
}
