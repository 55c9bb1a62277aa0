package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Pooled workers (Runner.Pool > 0). Starting the binary costs a few tenths of a CPU-second (it loads
// every shared library it links), so a run over many videos keeps its worker processes: each serves one
// job after another (`framesweep worker --loop`). What isolation needs stays per job:
//   - a deadline, a cancellation, an abandoned answer (the caller's error) or a protocol error kills the
//     process group, as in a one-shot worker, and the job's error is the same;
//   - the memory limit is the job's: before each job the parent resets the process's high-water mark
//     (/proc/PID/clear_refs "5"), so VmHWM and ru_maxrss tell this job's peak, and the watchdog kills the
//     group over the limit during the job. A process that keeps more than a quarter of the limit in
//     anonymous memory after a job (RssAnon: heaps, not the shared libraries every process maps) is
//     retired, so a job never inherits more than that from the jobs before it;
//   - a process that dies is replaced; a job that finds its reused process dead before it answered a
//     word (it died while idle, or as the job began) runs once more in a fresh process, so the error
//     is the video's own.
// A process ends when the pool is closed (EOF on its stdin), or is killed when one of the above
// retires it.

// retireFraction: a process whose resident set after a job is above Limits.Memory/retireFraction is
// retired.
const retireFraction = 4

// pool holds a pooled Runner's processes.
type pool struct {
	slots  chan struct{} // one per job running (capacity Runner.Pool)
	mu     sync.Mutex
	idle   []*proc
	closed bool
}

// proc is one pooled worker process.
type proc struct {
	cmd    *exec.Cmd
	pid    int
	stdin  io.WriteCloser
	stdout io.ReadCloser
	mr     *msgReader
	sock   *os.File // the parent's end of the socket descriptors are passed over
	stderr *tailWriter
}

// Close ends the pool's idle processes (EOF on stdin, then up to lingerGrace to exit, then SIGKILL);
// a process still serving a job ends when it finishes. A Runner without Pool has nothing to close.
// Jobs after Close run in processes that end with them. Idempotent.
func (r *Runner) Close() error {
	r.mu.Lock()
	p := r.pool
	r.mu.Unlock()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range idle {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.quit()
		}()
	}
	wg.Wait()
	return nil
}

// Started is how many worker processes r has started.
func (r *Runner) Started() int64 { return r.started.Load() }

func (r *Runner) noteStarted() { r.started.Add(1) }

func (r *Runner) thePool() *pool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pool == nil {
		r.pool = &pool{slots: make(chan struct{}, r.Pool)}
	}
	return r.pool
}

// runPooled runs req in one of the pool's processes (an idle one, else a fresh one) once a slot is
// free.
func (r *Runner) runPooled(ctx context.Context, req *Request, handle func(*header, []byte) error) error {
	p := r.thePool()
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%s: worker %s: waiting for a worker process: %w", req.Path, req.Op, ctx.Err())
	}
	defer func() { <-p.slots }()
	c := p.take()
	for {
		fresh := c == nil
		if fresh {
			var err error
			if c, err = r.startProc(); err != nil {
				return &Error{Path: req.Path, Op: req.Op, Kind: ErrStart, Err: err}
			}
		}
		keep, silent, err := r.pooledJob(ctx, c, req, handle)
		if keep {
			p.put(c)
		}
		if silent && !fresh {
			c = nil // the reused process was gone before the job began: once more, in a fresh one
			continue
		}
		return err
	}
}

// take returns an idle process, or nil.
func (p *pool) take() *proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return c
	}
	return nil
}

// put keeps c for a later job, or ends it when the pool is closed.
func (p *pool) put(c *proc) {
	p.mu.Lock()
	if !p.closed {
		p.idle = append(p.idle, c)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	c.quit()
}

// startProc starts a pooled worker process: `<exe> worker --loop`, with the rlimit backstop, in its own
// process group, a unix socket as descriptor 3 for the files of ReadFile/ProbeFile.
func (r *Runner) startProc() (*proc, error) {
	exe, args, err := r.argv("--loop")
	if err != nil {
		return nil, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "worker-socket"), os.NewFile(uintptr(fds[1]), "worker-socket")
	defer theirs.Close()
	c := &proc{sock: mine, stderr: newTailWriter(r.Log)}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), r.Env...)
	cmd.ExtraFiles = []*os.File{theirs} // descriptor childFD in the worker
	cmd.Stderr = c.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 2 * time.Second
	if c.stdin, err = cmd.StdinPipe(); err == nil {
		c.stdout, err = cmd.StdoutPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		mine.Close()
		return nil, err
	}
	r.noteStarted()
	c.cmd, c.pid, c.mr = cmd, cmd.Process.Pid, newMsgReader(c.stdout)
	return c, nil
}

// send writes req to the process (its descriptor first, over the socket, when it carries a file).
func (c *proc) send(req *Request) error {
	wire := *req
	if req.file != nil {
		if err := sendFD(c.sock, req.file); err != nil {
			return err
		}
		wire.FD, wire.FDPassed = 0, true
	}
	b, err := json.Marshal(&wire)
	if err != nil {
		return err
	}
	_, err = c.stdin.Write(append(b, '\n'))
	return err
}

// quit ends an idle process: EOF on its stdin, lingerGrace to exit, then SIGKILL to its group.
func (c *proc) quit() {
	_ = c.stdin.Close()
	t := time.AfterFunc(lingerGrace, func() { _ = killGroup(c.pid) })
	defer t.Stop()
	c.reap()
}

// kill ends the process now.
func (c *proc) kill() {
	_ = killGroup(c.pid)
	c.reap()
}

// reap drains the process's output, waits for it and releases what the parent held.
func (c *proc) reap() (*os.ProcessState, error) {
	_, _ = io.Copy(io.Discard, c.stdout)
	err := c.cmd.Wait()
	_ = c.sock.Close()
	return c.cmd.ProcessState, err
}

// resetPeak resets pid's high-water mark (VmHWM, and what ru_maxrss will say), so that it tells the
// coming job's peak; false when the kernel refused.
func resetPeak(pid int) bool {
	return os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0) == nil
}

// pooledJob runs one job in c. keep: c answered completely and may serve another job. silent: c ended
// without sending anything for this job (it was already dead, or died at once).
func (r *Runner) pooledJob(ctx context.Context, c *proc, req *Request, handle func(*header, []byte) error) (keep, silent bool, err error) {
	jctx, cancel := ctx, context.CancelFunc(func() {})
	if r.Limits.Timeout > 0 {
		jctx, cancel = context.WithTimeout(ctx, r.Limits.Timeout)
	}
	defer cancel()
	j := &job{req: req, limits: r.Limits, stderr: c.stderr}
	c.stderr.reset()
	peakOwn := resetPeak(c.pid)
	started := time.Now()
	// A deadline or a cancellation kills the group, as exec.CommandContext does for a one-shot worker.
	stopKill := context.AfterFunc(jctx, func() { _ = killGroup(c.pid) })
	defer stopKill()
	stopWatch, watchDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watchDone)
		j.watch(c.pid, r.poll(), stopWatch)
	}()
	delivered := false
	var terminal bool
	var remote *RemoteError
	var protoErr, handleErr error
	if serr := c.send(req); serr == nil {
		terminal, remote, protoErr, handleErr = j.consume(c.mr, func(h *header, p []byte) error {
			delivered = true
			return handle(h, p)
		})
	}
	close(stopWatch)
	<-watchDone
	if terminal && handleErr == nil && protoErr == nil && !j.memKill.Load() {
		if m, ok := readMem(c.pid); ok && peakOwn {
			j.notePeak(m.HWM)
		}
		r.usage(req, j, started)
		keep = stopKill() && c.reusable(r.Limits)
		if !keep {
			c.kill()
		}
		if remote != nil {
			return keep, false, remote
		}
		return keep, false, nil
	}
	err = r.endJob(ctx, jctx, c, j, started, peakOwn, terminal, remote, protoErr, handleErr)
	// Nothing reached the caller and the process died or broke down by itself: it may have been dead
	// before the job began (runPooled then tries a fresh one). A deadline, a cancellation or a memory
	// kill (the watchdog saw this job's process over the limit) is the job's own.
	silent = !delivered && handleErr == nil && (errors.Is(err, ErrWorkerCrashed) || errors.Is(err, ErrProtocol))
	return false, silent, err
}

// endJob ends a job that did not answer completely: the process is done for. It is killed when the
// caller gave up, given protoGrace to end on its own after a protocol error (a crash mid-frame cuts
// the stream: its real exit status is then reported), else waited for (it closed its output: it is
// ending); the deadline still kills it. How it ended is classified as a one-shot worker's.
func (r *Runner) endJob(ctx, jctx context.Context, c *proc, j *job, started time.Time, peakOwn, terminal bool, remote *RemoteError, protoErr, handleErr error) error {
	switch {
	case handleErr != nil:
		_ = killGroup(c.pid)
	case protoErr != nil:
		t := time.AfterFunc(protoGrace, func() {
			j.protoKill.Store(true)
			_ = killGroup(c.pid)
		})
		defer t.Stop()
	case terminal:
		_ = killGroup(c.pid) // answered, but the watchdog killed it meanwhile: memKill says so
	}
	ps, waitErr := c.reap()
	if peakOwn {
		j.noteExitPeak(ps) // the high-water mark was reset for this job: the peak is this job's
	}
	r.usage(j.req, j, started)
	if handleErr != nil {
		return handleErr
	}
	return j.classify(jctx, ctx, ps, waitErr, terminal, remote, protoErr)
}

func (r *Runner) usage(req *Request, j *job, started time.Time) {
	if r.Usage != nil {
		r.Usage(Usage{Op: req.Op, Path: req.Path, PeakRSS: j.peakRSS.Load(), Wall: time.Since(started)})
	}
}

func (r *Runner) poll() time.Duration {
	if r.Poll > 0 {
		return r.Poll
	}
	return 10 * time.Millisecond
}

// reusable reports whether c may serve another job: it wrote nothing past its answer and, under a
// memory limit, the anonymous memory it kept (heaps: not the shared libraries every process maps) is
// at most a retireFraction of the limit.
func (c *proc) reusable(l Limits) bool {
	if c.mr.r.Buffered() > 0 {
		return false
	}
	if l.Memory <= 0 {
		return true
	}
	m, ok := readMem(c.pid)
	return ok && m.Anon <= l.Memory/retireFraction
}
