package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/framesweep/framesweep/rgb"
)

// EnvTestOps enables the test-only ops (hang, crash, partial, abort, alloc, touch, retain, spawn, linger,
// exit, garbage) and the start log (EnvStartLog) in a worker when set to "1". Only tests set it; without
// it those ops are rejected as unknown.
const EnvTestOps = "FRAMESWEEP_WORKER_TESTOPS"

// Limits bound one job.
type Limits struct {
	// Timeout is the job's deadline (0: only the caller's context bounds it). On expiry the whole process
	// group is killed with SIGKILL.
	Timeout time.Duration
	// Memory is the resident-set limit in bytes (0: none). A watchdog polls /proc/PID/status and kills the
	// group when VmRSS exceeds it; the worker also sets RLIMIT_DATA to a looser backstop (see backstop) so
	// an allocation burst between two polls cannot take the machine down.
	Memory int64
}

// Runner starts supervised workers. The zero value re-executes the current binary as `<exe> worker`.
type Runner struct {
	Exe    string    // worker binary; "" = os.Executable()
	Args   []string  // arguments before the worker's own flags; nil = ["worker"]
	Env    []string  // extra environment (KEY=VALUE), added to the parent's
	Limits Limits    // per-job limits
	Log    io.Writer // the worker's stderr is copied here; nil = discarded (the last line is kept anyway)
	// Poll is the memory watchdog's period (0: 10 ms).
	Poll time.Duration
	// Usage, when set, is called after every job with what the worker process used (also on failure).
	Usage func(Usage)
	// Pool, when > 0, makes the Runner keep up to Pool worker processes (`worker --loop`), each serving
	// one job after another, and run at most Pool jobs at once (more wait for a free process). A process
	// is replaced only when it dies, goes over the memory limit, a job times out, is abandoned (the
	// caller's error or cancellation) or breaks the protocol, or it stays big after a job (pool.go).
	// Close ends the processes. 0: every job in a fresh process that ends with it.
	Pool int

	pool    *pool // Pool > 0: the processes (made on first use)
	mu      sync.Mutex
	started atomic.Int64 // worker processes started
}

// Usage is what one worker process used for one job.
type Usage struct {
	Op, Path string
	// PeakRSS in bytes: the highest of the watchdog's samples (VmRSS and VmHWM) and the kernel's
	// ru_maxrss when it is the worker's own (noteExitPeak); in a pooled process, since the job began.
	PeakRSS int64
	Wall    time.Duration // one-shot: from start to reaping; pooled: from the request to the answer
}

// Frame is one frame received from a worker. Pix is borrowed: valid until the callback returns.
type Frame struct {
	rgb.Image
	Index   int     // frame index in presentation order
	PTS     int64   // in the stream's time base
	Seconds float64 // presentation time
}

// backstop is the RLIMIT_DATA given to a worker whose RSS limit is mem. RLIMIT_DATA counts committed
// private writable mappings (Go maps heap arenas 64 MiB at a time, threads get 8 MiB stacks), which is
// more than RSS, so it sits well above the watchdog's limit and only catches runaway bursts.
func backstop(mem int64) int64 { return 2*mem + 512<<20 }

// job is one running worker process.
type job struct {
	req     *Request
	limits  Limits
	stderr  *tailWriter
	peakRSS atomic.Int64
	memKill atomic.Bool
	// protoKill: the supervisor killed the worker because its output broke the protocol.
	protoKill atomic.Bool
	// lingerKill: the supervisor killed a worker that did not exit after its final message.
	lingerKill atomic.Bool
}

// lingerGrace is how long a worker may take to exit after its final message.
const lingerGrace = 5 * time.Second

// protoGrace is how long a worker whose output broke the protocol may take to exit on its own.
const protoGrace = time.Second

// run executes req in a fresh worker and hands every message to handle. It returns the worker's
// RemoteError when the op failed, an *Error when the process failed, or handle's own error.
func (r *Runner) run(ctx context.Context, req *Request, handle func(h *header, payload []byte) error) error {
	if r.Pool > 0 {
		return r.runPooled(ctx, req, handle)
	}
	jctx, cancel := ctx, context.CancelFunc(func() {})
	if r.Limits.Timeout > 0 {
		jctx, cancel = context.WithTimeout(ctx, r.Limits.Timeout)
	}
	defer cancel()

	j := &job{req: req, limits: r.Limits, stderr: newTailWriter(r.Log)}
	cmd, err := r.command(jctx, req, j.stderr)
	if err != nil {
		return &Error{Path: req.Path, Op: req.Op, Kind: ErrStart, Err: err}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return &Error{Path: req.Path, Op: req.Op, Kind: ErrStart, Err: err}
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return &Error{Path: req.Path, Op: req.Op, Kind: ErrStart, Err: err}
	}
	pid := cmd.Process.Pid

	stopWatch := make(chan struct{})
	var watchDone sync.WaitGroup
	// Watched with or without a limit: its samples are the job's peak RSS (ru_maxrss at exit can be
	// the parent's, see noteExitPeak).
	watchDone.Add(1)
	go func() {
		defer watchDone.Done()
		j.watch(pid, r.poll(), stopWatch)
	}()

	r.noteStarted()
	terminal, remote, protoErr, handleErr := j.consume(newMsgReader(stdout), handle)
	if handleErr != nil {
		// The consumer gave up: do not wait for the worker to finish.
		_ = killGroup(pid)
	}
	if protoErr != nil {
		// The stream is unusable. A worker that is dying anyway (a crash mid-frame truncates the stream)
		// gets a moment to end on its own, so its real exit status is reported; then it is killed.
		t := time.AfterFunc(protoGrace, func() {
			j.protoKill.Store(true)
			_ = killGroup(pid)
		})
		defer t.Stop()
	}
	if terminal && handleErr == nil && protoErr == nil {
		// The answer is complete; a worker that lingers (or keeps writing) after it is killed, and
		// that is not held against the result.
		t := time.AfterFunc(lingerGrace, func() {
			j.lingerKill.Store(true)
			_ = killGroup(pid)
		})
		defer t.Stop()
	}
	// Drain so a worker blocked on a full pipe can exit (its output no longer matters).
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	close(stopWatch)
	watchDone.Wait()

	j.noteExitPeak(cmd.ProcessState)
	if r.Usage != nil {
		r.Usage(Usage{Op: req.Op, Path: req.Path, PeakRSS: j.peakRSS.Load(), Wall: time.Since(started)})
	}
	if handleErr != nil {
		return handleErr
	}
	return j.classify(jctx, ctx, cmd.ProcessState, waitErr, terminal, remote, protoErr)
}

// argv is the worker's executable and arguments: this executable's worker command (or Exe and Args),
// then extra, then the data rlimit backstop under a memory limit.
func (r *Runner) argv(extra ...string) (string, []string, error) {
	exe := r.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", nil, err
		}
	}
	args := append([]string(nil), r.Args...)
	if r.Args == nil {
		args = []string{"worker"}
	}
	args = append(args, extra...)
	if r.Limits.Memory > 0 {
		args = append(args, "--rlimit-data", strconv.FormatInt(backstop(r.Limits.Memory), 10))
	}
	return exe, args, nil
}

// command is the worker process for req: this executable's worker command (or Exe and Args), with the
// data rlimit backstop, the request on stdin and the video's descriptor when the request carries one.
func (r *Runner) command(ctx context.Context, req *Request, stderr io.Writer) (*exec.Cmd, error) {
	exe, args, err := r.argv()
	if err != nil {
		return nil, err
	}
	reqJSON, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), r.Env...)
	cmd.Stdin = bytes.NewReader(reqJSON)
	if req.file != nil {
		cmd.ExtraFiles = []*os.File{req.file} // descriptor childFD in the worker
	}
	cmd.Stderr = stderr
	// Own process group so a kill reaches anything the worker spawned; die with the parent.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = 2 * time.Second
	return cmd, nil
}

// consume reads messages until a terminal one or the end of the stream.
func (j *job) consume(mr *msgReader, handle func(*header, []byte) error) (terminal bool, remote *RemoteError, protoErr, handleErr error) {
	for {
		h, payload, err := mr.next()
		if err == io.EOF {
			return false, nil, nil, nil // the process ended without an answer: classify decides why
		}
		if err != nil {
			return false, nil, err, nil
		}
		switch h.Type {
		case msgError:
			if err := handle(h, nil); err != nil { // lets the caller keep the stats sent with the error
				return true, nil, nil, err
			}
			return true, &RemoteError{Path: j.req.Path, Op: j.req.Op, Code: h.Code, Message: h.Message, Failed: h.Failed, Damaged: h.Refused, DamageCause: h.RefusedWhy}, nil, nil
		case msgDone:
			if err := handle(h, nil); err != nil {
				return true, nil, nil, err
			}
			return true, nil, nil, nil
		case msgFrame, msgInfo:
			if err := handle(h, payload); err != nil {
				return false, nil, nil, err
			}
		default:
			return false, nil, fmt.Errorf("unknown message type %q", h.Type), nil
		}
	}
}

// classify turns how the process ended into the job's result. Kills by the supervisor win over whatever
// the process printed, since they explain it.
func (j *job) classify(jctx, parent context.Context, ps *os.ProcessState, waitErr error, terminal bool, remote *RemoteError, protoErr error) error {
	e := &Error{Path: j.req.Path, Op: j.req.Op, ExitCode: -1, PeakRSS: j.peakRSS.Load(), Limit: j.limits.Memory,
		Stderr: j.stderr.headline()}
	if ps != nil {
		e.ExitCode = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal()
		}
	}
	abnormal := ps == nil || !ps.Exited() || e.ExitCode > 1
	switch {
	case j.memKill.Load():
		e.Kind = ErrWorkerMemory
	case parent.Err() == context.Canceled:
		return fmt.Errorf("%s: worker %s: %w", j.req.Path, j.req.Op, context.Canceled)
	case jctx.Err() == context.DeadlineExceeded && !terminal:
		e.Kind = ErrWorkerTimeout
	case j.lingerKill.Load() && terminal:
		if remote != nil {
			return remote
		}
		return nil
	case j.protoKill.Load():
		e.Kind, e.Err = ErrProtocol, protoErr
	case abnormal && j.limits.Memory > 0 && e.PeakRSS > j.limits.Memory:
		e.Kind = ErrWorkerMemory
	case abnormal:
		e.Kind = ErrWorkerCrashed
		e.Err = waitErr
	case protoErr != nil:
		e.Kind, e.Err = ErrProtocol, protoErr
	case !terminal:
		e.Kind, e.Err = ErrProtocol, errors.New("worker exited without a result")
	case remote != nil:
		return remote
	default:
		return nil
	}
	return e
}

// watch polls the worker's RSS and kills its group when it exceeds the limit (if one is set). The
// peak noted is the high-water mark (VmHWM), which also holds a burst between two polls.
func (j *job) watch(pid int, poll time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		m, ok := readMem(pid)
		if ok {
			j.notePeak(max(m.RSS, m.HWM))
			if j.limits.Memory > 0 && m.RSS > j.limits.Memory {
				j.memKill.Store(true)
				_ = killGroup(pid)
				return
			}
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

func (j *job) notePeak(v int64) {
	for {
		old := j.peakRSS.Load()
		if v <= old || j.peakRSS.CompareAndSwap(old, v) {
			return
		}
	}
}

// noteExitPeak takes the kernel's peak RSS of the ended process (ru_maxrss, KiB) when it is the
// worker's own. Go starts a child with vfork, and at exec Linux folds the high-water mark of the memory
// it leaves — the parent's — into the child's ru_maxrss: a value not above this process's own VmHWM
// may be the parent's and says nothing of the worker.
func (j *job) noteExitPeak(ps *os.ProcessState) {
	if ps == nil {
		return
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return
	}
	peak := ru.Maxrss << 10
	if self, ok := readMem(os.Getpid()); ok && peak <= self.HWM {
		return
	}
	j.notePeak(peak)
}

// mem is what /proc/PID/status says of a process's memory, in bytes.
type mem struct {
	RSS  int64 // VmRSS: resident now
	HWM  int64 // VmHWM: the peak since the start or the last reset (resetPeak)
	Anon int64 // RssAnon: resident anonymous memory (heaps, stacks: not the mapped libraries)
}

// readMem reads pid's memory figures; false when the process is gone.
func readMem(pid int) (mem, bool) {
	var m mem
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return m, false
	}
	got := false
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, found := strings.Cut(line, ":")
		var dst *int64
		switch name {
		case "VmRSS":
			dst, got = &m.RSS, found
		case "VmHWM":
			dst = &m.HWM
		case "RssAnon":
			dst = &m.Anon
		default:
			continue
		}
		if f := strings.Fields(rest); len(f) > 0 { // "123456 kB"
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return m, false
			}
			*dst = kb << 10
		}
	}
	return m, got
}

// killGroup sends SIGKILL to the worker's process group (its pgid is its pid: Setpgid).
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return nil
	}
	return err
}

// tailWriter forwards the worker's stderr and keeps its last few KiB, and the first line of a crash
// report wherever it falls (a Go crash dump of many goroutines, registers last, outgrows the tail).
type tailWriter struct {
	mu    sync.Mutex
	fwd   io.Writer
	tail  []byte
	line  []byte // the line being written (up to tailMax)
	crash string // the first panic/fatal/signal line seen
}

// crashLine reports whether l opens a Go crash report.
func crashLine(l string) bool {
	return strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") || strings.HasPrefix(l, "SIG")
}

const tailMax = 8 << 10

func newTailWriter(fwd io.Writer) *tailWriter { return &tailWriter{fwd: fwd} }

// reset forgets what was kept (a pooled worker's next job starts with a clean record).
func (t *tailWriter) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tail, t.line, t.crash = t.tail[:0], t.line[:0], ""
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fwd != nil {
		_, _ = t.fwd.Write(p) // a failing log must not fail the job
	}
	t.tail = append(t.tail, p...)
	if len(t.tail) > tailMax {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailMax:]...)
	}
	if t.crash == "" {
		for _, c := range p {
			if c != '\n' {
				if len(t.line) < tailMax {
					t.line = append(t.line, c)
				}
				continue
			}
			if l := strings.TrimSpace(string(t.line)); crashLine(l) {
				t.crash = l
				break
			}
			t.line = t.line[:0]
		}
	}
	return len(p), nil
}

// headline picks the line that explains the end for a human: the first panic/fatal/signal line of a Go
// crash report when there is one (the lines after it are a stack dump), else the last non-empty line.
// It is for messages only; nothing classifies errors by it.
func (t *tailWriter) headline() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(string(t.tail), "\n")
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if last == "" {
			last = l
		}
	}
	if t.crash != "" {
		return t.crash
	}
	if l := strings.TrimSpace(string(t.line)); crashLine(l) {
		return l // a crash line the process died writing
	}
	return last
}
