package worker

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/framesweep/framesweep/decode"
)

// The child side of a pooled worker (`framesweep worker --loop`, started by a Runner with Pool > 0):
// requests arrive on stdin one after another, each answered like a one-shot worker's (messages ending
// in "done" or "error"), until stdin ends. Between two jobs the child frees what the last one left
// (debug.FreeOSMemory) before its answer ends, so the parent judges its idle size on what stays; and it
// checks that decode holds no FFmpeg object, so a leak (a -tags leakcheck build counts them) costs the
// job that left it, not one that comes after.

// EnvStartLog names a file a worker appends its pid to when it starts, when EnvTestOps is "1" too: how
// tests count the worker processes a command starts. Nothing else reads it.
const EnvStartLog = "FRAMESWEEP_WORKER_STARTS"

// noteStart appends this process's pid to $FRAMESWEEP_WORKER_STARTS (tests only).
func noteStart() {
	p := os.Getenv(EnvStartLog)
	if p == "" || os.Getenv(EnvTestOps) != "1" {
		return
	}
	if f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
		_, _ = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
		_ = f.Close()
	}
}

// exitLeak is a pooled worker's exit status when a job left an FFmpeg object of decode live.
const exitLeak = 3

// serveLoop answers requests until stdin ends (0), a request cannot be read (2), the answer cannot be
// written (2) or a job leaked a decoder object (3, before the job's final message: the parent sees the
// job end without an answer).
func serveLoop(stdin io.Reader, stdout, stderr io.Writer) int {
	lim := &eachLimit{r: stdin}
	dec := json.NewDecoder(lim)
	bw := bufio.NewWriterSize(stdout, 1<<20)
	for {
		lim.left = maxRequest
		var req Request
		if err := dec.Decode(&req); err == io.EOF {
			return 0
		} else if err != nil {
			fmt.Fprintf(stderr, "framesweep worker: reading a request from stdin: %v\n", err)
			return 2
		}
		code := loopJob(&req, bw, stderr)
		if code == exitLeak {
			_ = bw.Flush()
			return code
		}
		if err := bw.Flush(); err != nil {
			fmt.Fprintf(stderr, "framesweep worker: writing stdout: %v\n", err)
			return 2
		}
		if code == 2 {
			return code
		}
	}
}

// loopJob runs one request of a pooled worker: the descriptor it names (received over the socket),
// the op, the leak check, the memory release and the final message.
func loopJob(req *Request, w io.Writer, stderr io.Writer) int {
	if req.FDPassed {
		f, err := recvFD(childFD, req.Path)
		if err != nil {
			return finish(w, stderr, req, nil, err)
		}
		defer f.Close()
		req.FD = int(f.Fd())
	}
	stats, err := runRequest(req, w)
	if n := decode.LiveHandles(); n != 0 {
		fmt.Fprintf(stderr, "framesweep: leakcheck: %d FFmpeg handles of decode are live after a job\n", n)
		return exitLeak
	}
	debug.FreeOSMemory()
	return finish(w, stderr, req, stats, err)
}

// eachLimit bounds the bytes read for one request (left is reset before each).
type eachLimit struct {
	r    io.Reader
	left int64
}

func (l *eachLimit) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, fmt.Errorf("a request longer than %d bytes", maxRequest)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// sendFD passes f's descriptor over the unix socket sock (SCM_RIGHTS, one byte of data).
func sendFD(sock, f *os.File) error {
	fc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	sc, err := sock.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	cerr := fc.Control(func(fd uintptr) {
		rights := unix.UnixRights(int(fd))
		werr := sc.Write(func(s uintptr) bool {
			serr = unix.Sendmsg(int(s), []byte{0}, rights, nil, 0)
			return !errors.Is(serr, unix.EAGAIN)
		})
		if serr == nil {
			serr = werr
		}
	})
	if cerr != nil {
		return cerr
	}
	return serr
}

// recvFD receives one descriptor over the unix socket at descriptor fd (close-on-exec); name names the
// file it holds.
func recvFD(fd int, name string) (*os.File, error) {
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(fd, make([]byte, 1), oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("%s: receiving its descriptor: %w", name, err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("%s: receiving its descriptor: no descriptor came (%v)", name, err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, f := range fds {
			unix.Close(f)
		}
		return nil, fmt.Errorf("%s: receiving its descriptor: %d descriptors (%v)", name, len(fds), err)
	}
	return os.NewFile(uintptr(fds[0]), name), nil
}
