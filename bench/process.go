package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// procStats is one child process's cost, from the rusage wait4 returned for it: the child and any
// children it waited for (ru_maxrss is the largest of them, not a sum).
type procStats struct {
	wall   float64 // seconds from start to exit, measured here
	cpu    float64 // user + system seconds
	rssMiB float64 // peak resident set (ru_maxrss, KiB on Linux)
	stdout []byte
}

// maxStderr bounds what is kept of a child's stderr (the tail; errors are its last line).
const maxStderr = 16 << 10

// runProcess runs name with args as its own process and returns its cost. A non-zero exit is an error
// naming the program and the last line of its stderr.
func runProcess(ctx context.Context, name string, args ...string) (procStats, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	errb := &tailBuffer{max: maxStderr}
	cmd.Stdout, cmd.Stderr = &out, errb
	t0 := time.Now()
	err := cmd.Run()
	st := procStats{wall: time.Since(t0).Seconds(), stdout: out.Bytes()}
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			st.cpu = float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
			st.rssMiB = float64(ru.Maxrss) / 1024
		}
	}
	if err != nil {
		return st, fmt.Errorf("%s: %v: %s", filepath.Base(name), err, lastLine(errb.String()))
	}
	return st, nil
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
