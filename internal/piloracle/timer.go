package piloracle

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Timer keeps one Python process with one image loaded, so a benchmark can time Pillow's
// Image.resize one call at a time, interleaved with its own runs (the same load hits both). It owns
// the process; Close ends it and is idempotent.
type Timer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	closed bool
}

const timerScript = `
import sys, time
from PIL import Image
F = {"bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC, "lanczos": Image.LANCZOS, "nearest": Image.NEAREST}
path, w, h, ow, oh, flt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), F[sys.argv[6]]
with open(path, "rb") as f:
    im = Image.frombytes("RGB", (w, h), f.read())
im.resize((ow, oh), flt)
print("ready", flush=True)
for line in sys.stdin:
    t0 = time.perf_counter()
    im.resize((ow, oh), flt)
    print(repr(time.perf_counter() - t0), flush=True)
`

// NewTimer starts Python with c.Src loaded (written under dir) and warmed up once.
func NewTimer(dir string, c Case) (*Timer, error) {
	in := filepath.Join(dir, "timer_src.rgb")
	if err := os.WriteFile(in, c.Src.Packed(), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(Python, "-c", timerScript, in, strconv.Itoa(c.Src.W), strconv.Itoa(c.Src.H),
		strconv.Itoa(c.OutW), strconv.Itoa(c.OutH), c.Filter)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	t := &Timer{cmd: cmd, in: stdin, out: bufio.NewReader(stdout)}
	line, err := t.out.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Close()
		return nil, fmt.Errorf("piloracle: timer did not start (%q): %v", line, err)
	}
	return t, nil
}

// Time runs one Image.resize in the Python process and returns its duration as measured there.
func (t *Timer) Time() (time.Duration, error) {
	if t.closed {
		return 0, fmt.Errorf("piloracle: timer is closed")
	}
	if _, err := io.WriteString(t.in, "go\n"); err != nil {
		return 0, err
	}
	line, err := t.out.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("piloracle: timer: %v", err)
	}
	s, err := strconv.ParseFloat(strings.TrimSpace(line), 64)
	if err != nil {
		return 0, fmt.Errorf("piloracle: timer output %q: %v", line, err)
	}
	return time.Duration(s * float64(time.Second)), nil
}

// Close ends the Python process.
func (t *Timer) Close() error {
	if t == nil || t.closed {
		return nil
	}
	t.closed = true
	_ = t.in.Close() // EOF ends the read loop
	return t.cmd.Wait()
}
