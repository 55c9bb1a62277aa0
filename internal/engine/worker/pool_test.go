package worker

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/framesweep/framesweep/decode"
)

// poolRunner returns a pooled Runner (one process) with the test ops enabled, closed at the test's end.
func poolRunner(t *testing.T, lim Limits, size int) *Runner {
	r := &Runner{Exe: workerBin(t), Env: []string{EnvTestOps + "=1"}, Limits: lim, Pool: size}
	t.Cleanup(func() { r.Close() })
	return r
}

// readAll reads indices of path through r (by name, or by descriptor when f is set) and returns the
// frames' bytes.
func readAll(t *testing.T, r *Runner, f *os.File, path string, idx []int) [][]byte {
	t.Helper()
	var got [][]byte
	fn := func(fr *decode.Frame) error { got = append(got, bytes.Clone(fr.Packed())); return nil }
	var err error
	if f != nil {
		_, err = r.ReadFile(context.Background(), f, path, idx, decode.Options{}, fn)
	} else {
		_, err = r.Read(context.Background(), path, idx, decode.Options{}, fn)
	}
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return got
}

// TestPoolServesManyJobsInOneProcess: one pooled process probes and reads three videos, by name and by
// descriptor (passed over its socket), resized or not, and each answer is bit for bit a fresh
// worker's; the handled error of a bad index leaves it serving. One process started in all.
func TestPoolServesManyJobsInOneProcess(t *testing.T) {
	t.Parallel()
	pooled := poolRunner(t, Limits{Timeout: time.Minute, Memory: 1 << 30}, 1)
	fresh := &Runner{Exe: workerBin(t), Limits: Limits{Timeout: time.Minute}}
	ctx := context.Background()
	nasa, mov := repoVideo(t, "nasa_13013.mp4"), repoVideo(t, "video_90.mov")
	for _, p := range []string{nasa, mov} {
		a, err := pooled.Probe(ctx, p, decode.Options{}, true)
		b, err2 := fresh.Probe(ctx, p, decode.Options{}, true)
		if err != nil || err2 != nil || a.Frames != b.Frames || len(a.PTSS) != len(b.PTSS) || len(a.PTSS) != a.Frames || a.Path != p {
			t.Fatalf("probe %s: pooled %d frames %v, fresh %d %v", p, a.Frames, err, b.Frames, err2)
		}
		idx := []int{a.Frames - 1, 0, a.Frames / 2, 0}
		if !equalFrames(readAll(t, pooled, nil, p, idx), readAll(t, fresh, nil, p, idx)) {
			t.Errorf("%s: the pooled worker's frames differ from a fresh one's", p)
		}
	}
	// By descriptor: the name now leads to another video, the worker decodes the opened one.
	dir := t.TempDir()
	p := filepath.Join(dir, "v.mp4")
	copyTo(t, nasa, p)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	copyTo(t, mov, filepath.Join(dir, "other"))
	os.Rename(filepath.Join(dir, "other"), p)
	info, err := pooled.ProbeFile(ctx, f, p, decode.Options{}, false)
	if err != nil || info.Frames != 390 || info.Path != p {
		t.Fatalf("ProbeFile: %d frames at %q, %v", info.Frames, info.Path, err)
	}
	idx := []int{0, 150, 389}
	if !equalFrames(readAll(t, pooled, f, p, idx), readAll(t, fresh, nil, nasa, idx)) {
		t.Error("the frames read by descriptor are not the opened file's")
	}
	_, err = pooled.ReadFile(ctx, f, p, []int{390}, decode.Options{}, func(*decode.Frame) error { return nil })
	if !errors.Is(err, decode.ErrOutOfRange) || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), "/proc/self/fd") {
		t.Errorf("read past the end: %v", err)
	}
	var sized []int
	if _, err := pooled.ReadResized(ctx, nasa, []int{1, 2}, decode.Options{}, Size{W: 64, H: 36}, func(fr *decode.Frame) error {
		sized = append(sized, fr.W, fr.H)
		return nil
	}); err != nil || len(sized) != 4 || sized[0] != 64 || sized[3] != 36 {
		t.Errorf("resized: %v %v", sized, err)
	}
	if n := pooled.Started(); n != 1 {
		t.Errorf("the pool started %d processes for 10 jobs, want 1", n)
	}
}

func equalFrames(a, b [][]byte) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestPoolFailures: every way a job can end a worker (TestSupervisorFailures's cases) costs that job
// only, with the same typed error, when the job runs in a pooled process that already served one; the
// next job runs in a fresh process and succeeds.
func TestPoolFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		req      Request
		lim      Limits
		kind     error
		exitCode int
		signal   syscall.Signal
		stderr   string
	}{
		{name: "hang", req: Request{Op: "hang"}, lim: Limits{Timeout: 5 * time.Second}, kind: ErrWorkerTimeout, exitCode: -1, signal: syscall.SIGKILL},
		{name: "crash", req: Request{Op: "crash"}, kind: ErrWorkerCrashed, exitCode: 2, stderr: "SIGSEGV"},
		{name: "abort", req: Request{Op: "abort"}, kind: ErrWorkerCrashed, exitCode: -1, signal: syscall.SIGABRT, stderr: "panic: "},
		{name: "alloc", req: Request{Op: "alloc"}, lim: Limits{Memory: 400 << 20}, kind: ErrWorkerMemory, exitCode: -1, signal: syscall.SIGKILL},
		{name: "partial-frame", req: Request{Op: "partial"}, kind: ErrWorkerCrashed, exitCode: 2, stderr: "SIGSEGV"},
		{name: "exit3", req: Request{Op: "exit", Arg: 3}, kind: ErrWorkerCrashed, exitCode: 3},
		{name: "exit0-no-answer", req: Request{Op: "exit", Arg: 0}, kind: ErrProtocol},
		{name: "garbage", req: Request{Op: "garbage"}, kind: ErrProtocol},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lim := tc.lim
			if lim.Timeout == 0 {
				lim.Timeout = 20 * time.Second
			}
			r := poolRunner(t, lim, 1)
			ctx := context.Background()
			if err := runOp(t, r, ctx, &Request{Op: "touch", Arg: 1 << 20, Path: "before.mp4"}); err != nil {
				t.Fatalf("the job before: %v", err)
			}
			req := tc.req
			req.Path = "/videos/" + tc.name + ".mp4"
			err := runOp(t, r, ctx, &req)
			var we *Error
			if !errors.Is(err, tc.kind) || !errors.As(err, &we) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
			if we.Path != req.Path || !strings.Contains(err.Error(), req.Path) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error does not name the job in one line: %q", err)
			}
			// garbage exits by itself as the supervisor kills it for the broken protocol: either ends it.
			killed := tc.name == "garbage" && we.Signal == syscall.SIGKILL
			if tc.exitCode != 0 && we.ExitCode != tc.exitCode || we.Signal != tc.signal && !killed {
				t.Errorf("exit code %d signal %v, want %d %v", we.ExitCode, we.Signal, tc.exitCode, tc.signal)
			}
			if !strings.Contains(we.Stderr, tc.stderr) {
				t.Errorf("stderr line %q does not contain %q", we.Stderr, tc.stderr)
			}
			if errors.Is(tc.kind, ErrWorkerMemory) && we.PeakRSS <= lim.Memory {
				t.Errorf("peak RSS %d not above the limit %d", we.PeakRSS, lim.Memory)
			}
			before := r.Started()
			if _, err := r.Probe(ctx, repoVideo(t, "video_90.mov"), decode.Options{}, false); err != nil {
				t.Fatalf("the job after: %v", err)
			}
			if r.Started() != before+1 {
				t.Errorf("the job after started %d processes, want 1 (the failed one's replacement)", r.Started()-before)
			}
		})
	}
}

// TestPoolMemoryIsPerJob: the limit and the reported peak are each job's, not the process's life's:
// a job's peak does not carry into the next one's, a process that keeps more than a quarter of the
// limit is retired after its job, and one over the limit costs its job only.
func TestPoolMemoryIsPerJob(t *testing.T) {
	t.Parallel()
	const limit = 600 << 20
	var peaks []int64
	var mu sync.Mutex
	r := poolRunner(t, Limits{Timeout: 20 * time.Second, Memory: limit}, 1)
	r.Usage = func(u Usage) { mu.Lock(); peaks = append(peaks, u.PeakRSS); mu.Unlock() }
	ctx := context.Background()
	op := func(name string, arg int64) error {
		return runOp(t, r, ctx, &Request{Op: name, Arg: arg, Path: name + ".mp4"})
	}
	if err := op("touch", 200<<20); err != nil {
		t.Fatal(err)
	}
	if err := op("touch", 1<<20); err != nil {
		t.Fatal(err)
	}
	if peaks[0] < 200<<20 || peaks[1] >= peaks[0]-150<<20 || r.Started() != 1 {
		t.Fatalf("peaks %d then %d MiB (want ≥ 200, then the small job's own), %d processes (want 1)", peaks[0]>>20, peaks[1]>>20, r.Started())
	}
	if err := op("retain", 200<<20); err != nil { // keeps 200 MiB > limit/4: retired after its answer
		t.Fatal(err)
	}
	if err := op("touch", 1<<20); err != nil || r.Started() != 2 {
		t.Fatalf("after a job that kept %d MiB: %v, %d processes (want 2: it was retired)", 200, err, r.Started())
	}
	if err := op("alloc", 0); !errors.Is(err, ErrWorkerMemory) {
		t.Fatalf("alloc: %v", err)
	}
	if err := op("touch", 1<<20); err != nil || r.Started() != 3 {
		t.Fatalf("after a memory kill: %v, %d processes (want 3)", err, r.Started())
	}
}

// TestPoolBoundsProcesses: six jobs at once through a pool of two run in at most two processes.
func TestPoolBoundsProcesses(t *testing.T) {
	t.Parallel()
	r := poolRunner(t, Limits{Timeout: 30 * time.Second}, 2)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = r.Probe(context.Background(), repoVideo(t, "video_90.mov"), decode.Options{}, false)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := r.Started(); n < 1 || n > 2 {
		t.Errorf("%d processes for six jobs in a pool of two", n)
	}
}

// TestPoolAbandonedJobs: a consumer's error and a cancellation end the process serving the job (it
// was mid-answer) and the next job gets a fresh one; waiting for a free process honours the context.
func TestPoolAbandonedJobs(t *testing.T) {
	t.Parallel()
	r := poolRunner(t, Limits{Timeout: 30 * time.Second}, 1)
	ctx := context.Background()
	nasa := repoVideo(t, "nasa_13013.mp4")
	stop := errors.New("enough")
	n := 0
	_, err := r.Read(ctx, nasa, []int{0, 1, 2, 3}, decode.Options{}, func(*decode.Frame) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("consumer error: %v after %d frames", err, n)
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancel)
	if err := runOp(t, r, cctx, &Request{Op: "hang", Path: "v.mp4"}); !errors.Is(err, context.Canceled) || errors.Is(err, ErrWorkerTimeout) {
		t.Fatalf("cancel: %v", err)
	}
	if _, err := r.Probe(ctx, nasa, decode.Options{}, false); err != nil || r.Started() != 3 {
		t.Fatalf("after: %v, %d processes (want 3)", err, r.Started())
	}
	// The one slot busy with a hang: a second job gives up with its context.
	bctx, bcancel := context.WithCancel(ctx)
	defer bcancel()
	go runOp(t, r, bctx, &Request{Op: "hang", Path: "busy.mp4"})
	time.Sleep(100 * time.Millisecond)
	wctx, wcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer wcancel()
	if _, err := r.Probe(wctx, nasa, decode.Options{}, false); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), nasa) {
		t.Fatalf("waiting for a process: %v", err)
	}
}

// TestPoolClose: Close ends the idle process (EOF on its stdin: it exits by itself), and a job after
// Close runs in a process that ends with it.
func TestPoolClose(t *testing.T) {
	t.Parallel()
	r := poolRunner(t, Limits{Timeout: 30 * time.Second}, 1)
	if err := runOp(t, r, context.Background(), &Request{Op: "touch", Arg: 1, Path: "v.mp4"}); err != nil {
		t.Fatal(err)
	}
	c := r.pool.idle[0]
	start := time.Now()
	r.Close()
	if ps := c.cmd.ProcessState; ps == nil || !ps.Exited() || ps.ExitCode() != 0 || time.Since(start) > lingerGrace {
		t.Fatalf("the idle process after Close: %v", ps)
	}
	if err := runOp(t, r, context.Background(), &Request{Op: "touch", Arg: 1, Path: "v.mp4"}); err != nil || len(r.pool.idle) != 0 || r.Started() != 2 {
		t.Fatalf("a job after Close: %v, %d idle, %d started", err, len(r.pool.idle), r.Started())
	}
}
