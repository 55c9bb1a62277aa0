package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procStats is one child process's cost: wall time measured here, CPU time and peak RSS from the
// rusage wait4 returned for the child (and any children it waited for; ru_maxrss is the largest of them).
type procStats struct {
	wall   float64 // seconds from start to exit, measured here
	cpu    float64 // user + system seconds
	rssMiB float64 // peak resident set (ru_maxrss); -1 when unknown (no GNU time)
	stdout []byte
}

// gnuTime launches every measured child. Linux carries the peak RSS of the memory map a process had
// before execve into its ru_maxrss, and a child of this process starts on this (large) process's map
// (Go forks with CLONE_VM), so wait4 here would report max(this process's peak, the child's). GNU time
// is a small process: its child's ru_maxrss, which it prints (%M, from wait4), is the child's own.
const gnuTime = "/usr/bin/time"

// maxStderr bounds what is kept of a child's stderr (the tail; errors are its last line).
const maxStderr = 16 << 10

// runProcess runs name with args as its own process (through GNU time when present) and returns its
// cost. A non-zero exit is an error naming the program and the last line of its stderr.
func runProcess(ctx context.Context, name string, args ...string) (procStats, error) {
	var usage string
	if st, err := os.Stat(gnuTime); err == nil && !st.IsDir() {
		f, err := os.CreateTemp("", "framesweep-rusage-")
		if err != nil {
			return procStats{}, err
		}
		usage = f.Name()
		_ = f.Close()
		defer os.Remove(usage)
	}
	var cmd *exec.Cmd
	if usage != "" {
		cmd = exec.CommandContext(ctx, gnuTime, append([]string{"-f", "rusage %U %S %M", "-o", usage, "--", name}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, name, args...)
	}
	var out bytes.Buffer
	errb := &tailBuffer{max: maxStderr}
	cmd.Stdout, cmd.Stderr = &out, errb
	t0 := time.Now()
	err := cmd.Run()
	st := procStats{wall: time.Since(t0).Seconds(), stdout: out.Bytes(), rssMiB: -1}
	if usage != "" {
		if u, s, kib, ok := parseGNUTime(usage); ok {
			st.cpu, st.rssMiB = u+s, kib/1024
		}
	} else if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok { // CPU is right; ru_maxrss is not (see gnuTime)
			st.cpu = float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
		}
	}
	if err != nil {
		pe := &ProcError{Program: filepath.Base(name), Code: -1, Cause: err, Line: lastLine(errb.String())}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			pe.Code = ee.ExitCode()
		}
		return st, pe
	}
	return st, nil
}

// ProcError is a measured child that failed: its exit status (-1 when it did not exit: not started,
// killed by a signal) and the last line of its stderr, which is where the peers put their one-line error.
type ProcError struct {
	Program string
	Code    int
	Cause   error
	Line    string
}

func (e *ProcError) Error() string { return fmt.Sprintf("%s: %v: %s", e.Program, e.Cause, e.Line) }
func (e *ProcError) Unwrap() error { return e.Cause }

// parseGNUTime reads the "rusage U S M" line GNU time wrote (after a "Command exited with non-zero
// status" line when the command failed).
func parseGNUTime(path string) (user, sys, maxKiB float64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "rusage" {
			continue
		}
		var v [3]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(f[i+1], 64); err != nil {
				return 0, 0, 0, false
			}
		}
		return v[0], v[1], v[2], true
	}
	return 0, 0, 0, false
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "(no output on stderr)"
	}
	return s
}
