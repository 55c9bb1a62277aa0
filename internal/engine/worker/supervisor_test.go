package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// workerBin returns the plain framesweep binary (testenv.PlainBinary): these tests measure the child's
// memory and time, which the race runtime's shadow memory and slower exit would change; the
// supervisor under test runs in this (race-built) test process.
func workerBin(t *testing.T) string {
	t.Helper()
	return testenv.PlainBinary(t)
}

// testRunner returns a Runner with the test ops enabled.
func testRunner(t *testing.T, lim Limits) *Runner {
	return &Runner{Exe: workerBin(t), Env: []string{EnvTestOps + "=1"}, Limits: lim}
}

func runOp(t *testing.T, r *Runner, ctx context.Context, req *Request) error {
	t.Helper()
	return r.run(ctx, req, func(*header, []byte) error { return nil })
}

func TestSupervisorFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		req      Request
		lim      Limits
		kind     error
		exitCode int
		signal   syscall.Signal
		stderr   string // substring of the kept stderr line
	}{
		{name: "hang", req: Request{Op: "hang"}, lim: Limits{Timeout: 300 * time.Millisecond}, kind: ErrWorkerTimeout,
			exitCode: -1, signal: syscall.SIGKILL},
		{name: "crash", req: Request{Op: "crash"}, lim: Limits{Timeout: 20 * time.Second}, kind: ErrWorkerCrashed,
			exitCode: 2, stderr: "SIGSEGV"},
		{name: "abort", req: Request{Op: "abort"}, lim: Limits{Timeout: 20 * time.Second}, kind: ErrWorkerCrashed,
			exitCode: -1, signal: syscall.SIGABRT, stderr: "panic: "},
		{name: "alloc", req: Request{Op: "alloc"}, lim: Limits{Timeout: 20 * time.Second, Memory: 150 << 20},
			kind: ErrWorkerMemory, exitCode: -1, signal: syscall.SIGKILL},
		{name: "partial-frame", req: Request{Op: "partial"}, lim: Limits{Timeout: 20 * time.Second}, kind: ErrWorkerCrashed,
			exitCode: 2, stderr: "SIGSEGV"},
		{name: "exit3", req: Request{Op: "exit", Arg: 3}, lim: Limits{Timeout: 20 * time.Second}, kind: ErrWorkerCrashed,
			exitCode: 3},
		{name: "exit0-no-answer", req: Request{Op: "exit", Arg: 0}, lim: Limits{Timeout: 20 * time.Second},
			kind: ErrProtocol},
		{name: "garbage", req: Request{Op: "garbage"}, lim: Limits{Timeout: 20 * time.Second}, kind: ErrProtocol},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := testRunner(t, tc.lim)
			req := tc.req
			req.Path = "/videos/" + tc.name + ".mp4"
			start := time.Now()
			err := runOp(t, r, context.Background(), &req)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("err %T is not *worker.Error", err)
			}
			if we.Path != req.Path || we.Op != req.Op || !strings.Contains(err.Error(), req.Path) {
				t.Errorf("error does not name the job: %v", err)
			}
			if tc.exitCode != 0 && we.ExitCode != tc.exitCode {
				t.Errorf("exit code %d, want %d", we.ExitCode, tc.exitCode)
			}
			// garbage exits by itself as the supervisor kills it for the broken protocol: either ends it.
			if we.Signal != tc.signal && !(tc.name == "garbage" && we.Signal == syscall.SIGKILL) {
				t.Errorf("signal %v, want %v", we.Signal, tc.signal)
			}
			if !strings.Contains(we.Stderr, tc.stderr) {
				t.Errorf("stderr line %q does not contain %q", we.Stderr, tc.stderr)
			}
			if errors.Is(tc.kind, ErrWorkerMemory) && we.PeakRSS <= tc.lim.Memory {
				t.Errorf("peak RSS %d not above the limit %d", we.PeakRSS, tc.lim.Memory)
			}
			if el := time.Since(start); el > 15*time.Second {
				t.Errorf("took %v", el)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestUnknownOpIsRemoteError(t *testing.T) {
	t.Parallel()
	// Without the env var, test ops do not exist: "hang" must fail fast as an unknown op, not hang.
	r := &Runner{Exe: workerBin(t), Limits: Limits{Timeout: 20 * time.Second}}
	for _, op := range []string{"hang", "no-such-op"} {
		err := runOp(t, r, context.Background(), &Request{Op: op, Path: "v.mp4"})
		var re *RemoteError
		if !errors.As(err, &re) || !errors.Is(err, errUnknownOp) {
			t.Fatalf("op %q: err = %v (%T), want a RemoteError matching errUnknownOp", op, err, err)
		}
		if errors.Is(err, ErrWorkerCrashed) {
			t.Errorf("a handled error must not read as a crash")
		}
	}
}

// TestLingeringWorkerAfterAnswer: a worker that answered but does not exit is killed after a grace
// period, and its complete answer stands.
func TestLingeringWorkerAfterAnswer(t *testing.T) {
	t.Parallel()
	r := testRunner(t, Limits{Timeout: time.Minute})
	start := time.Now()
	if err := runOp(t, r, context.Background(), &Request{Op: "linger", Path: "v.mp4"}); err != nil {
		t.Fatalf("err = %v, want nil", err)
	}
	if el := time.Since(start); el < lingerGrace || el > lingerGrace+20*time.Second {
		t.Errorf("took %v, want about the %v grace", el, lingerGrace)
	}
}

func TestParentCancel(t *testing.T) {
	t.Parallel()
	r := testRunner(t, Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	err := runOp(t, r, ctx, &Request{Op: "hang", Path: "v.mp4"})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrWorkerTimeout) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// A deadline on the caller's context is a timeout like Limits.Timeout.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if err := runOp(t, r, ctx2, &Request{Op: "hang", Path: "v.mp4"}); !errors.Is(err, ErrWorkerTimeout) {
		t.Fatalf("err = %v, want ErrWorkerTimeout", err)
	}
}

func TestTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	// Long enough for the worker to start its child on a loaded machine (3 s was not, once, while
	// make test ran every package at once on 2 cores).
	r := testRunner(t, Limits{Timeout: 10 * time.Second})
	var pid int
	err := r.run(context.Background(), &Request{Op: "spawn"}, func(h *header, _ []byte) error {
		_, err := fmt.Sscanf(string(h.Info), "%d", &pid)
		return err
	})
	if !errors.Is(err, ErrWorkerTimeout) {
		t.Fatalf("err = %v, want timeout", err)
	}
	if pid <= 0 {
		t.Fatal("the worker did not report its child's pid")
	}
	// The grandchild (a sleep in the worker's group) must be gone: dead, or a zombie awaiting its reaper.
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || zombie(b) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still running: %s", pid, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// zombie reports whether a /proc/PID/stat line is in state Z or X.
func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

func TestMsgReaderRejectsBadStreams(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"truncated payload": `{"type":"frame","index":1,"w":2,"h":2,"bytes":12}` + "\nabc",
		"size mismatch":     `{"type":"frame","index":1,"w":2,"h":2,"bytes":11}` + "\n" + strings.Repeat("x", 11),
		"huge frame":        `{"type":"frame","index":1,"w":100000,"h":100000,"bytes":30000000000}` + "\n",
		"not json":          "hello\n",
		"truncated line":    `{"type":"done"`,
	}
	for name, in := range cases {
		mr := newMsgReader(strings.NewReader(in))
		if _, _, err := mr.next(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	mr := newMsgReader(strings.NewReader(`{"type":"frame","index":7,"w":2,"h":1,"bytes":6}` + "\nabcdef" + `{"type":"done"}` + "\n"))
	h, p, err := mr.next()
	if err != nil || h.Index != 7 || string(p) != "abcdef" {
		t.Fatalf("frame: %+v %q %v", h, p, err)
	}
	if h, _, err = mr.next(); err != nil || h.Type != msgDone {
		t.Fatalf("done: %+v %v", h, err)
	}
	if _, _, err = mr.next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

// TestHeadlineLongCrash: the first line of a crash report is the headline even when the dump after
// it (many goroutines, then the registers) is longer than the kept tail.
func TestHeadlineLongCrash(t *testing.T) {
	tw := newTailWriter(nil)
	tw.Write([]byte("some log line\nSIGSEGV: segmentation violation\nPC=0x1 m=0 sigcode=1\n"))
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(tw, "goroutine %d [running]:\nmain.f()\n\t/x/y.go:%d +0x1\n", i, i)
	}
	tw.Write([]byte("rax    0x0\ngs     0x0\n"))
	if h := tw.headline(); h != "SIGSEGV: segmentation violation" {
		t.Fatalf("headline %q", h)
	}
	plain := newTailWriter(nil)
	plain.Write([]byte("first\nx.mp4: open: not a media file\n\n"))
	if h := plain.headline(); h != "x.mp4: open: not a media file" {
		t.Fatalf("headline %q", h)
	}
}
