package worker

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/num"
)

// errUnknownOp is reported (code "unknown_op") for an op the worker does not know.
var errUnknownOp = errors.New("unknown op")

// Main is the worker side of the protocol: `framesweep worker [--rlimit-data BYTES]` reads one Request
// from stdin, answers on stdout, logs on stderr. It returns 0 after "done", 1 after a handled "error",
// 2 on bad usage or an unreadable request. Anything else (a signal, a Go crash exit) is a crash to the
// parent. With --loop (a pooled worker, Runner.Pool) it answers one request after another until stdin
// ends, then returns 0 (serveLoop).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("framesweep worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a bad flag is one line, as in every command; usage only for -h
	rlimit := fs.Int64("rlimit-data", 0, "set RLIMIT_DATA to this many bytes before any work (0: unchanged)")
	loop := fs.Bool("loop", false, "answer one request after another until stdin ends (a pooled worker); a request's descriptor comes over the socket at descriptor 3")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "usage: framesweep worker [--rlimit-data BYTES] [--loop] < JOB.json\n\n"+
				"internal: supervised decode jobs, each request as JSON on stdin, the answers on stdout\n\nflags:\n")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "framesweep worker: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "framesweep worker: unexpected argument %q (the job comes on stdin)\n", fs.Arg(0))
		return 2
	}
	if err := num.AtLeast(0).Int("--rlimit-data", *rlimit); err != nil { // a negative limit is no "unchanged"
		fmt.Fprintf(stderr, "framesweep worker: %v\n", err)
		return 2
	}
	if *rlimit > 0 {
		lim := syscall.Rlimit{Cur: uint64(*rlimit), Max: uint64(*rlimit)}
		if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &lim); err != nil {
			fmt.Fprintf(stderr, "framesweep worker: setrlimit RLIMIT_DATA %d: %v\n", *rlimit, err)
			return 2
		}
	}
	noteStart()
	if *loop {
		return serveLoop(stdin, stdout, stderr)
	}
	var req Request
	if err := json.NewDecoder(io.LimitReader(stdin, maxRequest)).Decode(&req); err != nil {
		fmt.Fprintf(stderr, "framesweep worker: reading the request from stdin: %v\n", err)
		return 2
	}
	bw := bufio.NewWriterSize(stdout, 1<<20)
	code := serve(&req, bw, stderr)
	if err := bw.Flush(); err != nil {
		fmt.Fprintf(stderr, "framesweep worker: writing stdout: %v\n", err)
		return 2
	}
	return code
}

// serve runs one request and writes its terminal message.
func serve(req *Request, w io.Writer, stderr io.Writer) int {
	stats, err := runRequest(req, w)
	return finish(w, stderr, req, stats, err)
}

// runRequest runs one request, writing its "info"/"frame" messages, and returns what "done" or "error" says.
func runRequest(req *Request, w io.Writer) (any, error) {
	if os.Getenv(EnvTestOps) == "1" {
		if op, ok := testOps[req.Op]; ok {
			return nil, op(req, w)
		}
	}
	op, ok := ops[req.Op]
	if !ok {
		return nil, fmt.Errorf("worker: %w %q", errUnknownOp, req.Op)
	}
	return op(req, w)
}

// finish writes "done" (with stats) or "error" (with the sentinel code and one-line message).
func finish(w, stderr io.Writer, req *Request, stats any, err error) int {
	if err != nil {
		h := &header{Type: msgError, Code: errorCode(err), Message: err.Error(), Failed: decode.FailedFrames(err), Refused: decode.DamagedFrames(err)}
		var de *decode.DamagedError
		if errors.As(err, &de) {
			h.RefusedWhy = de.Cause
		}
		var re *readError
		if errors.As(err, &re) {
			h.Stats, _ = json.Marshal(re.stats)
		}
		if werr := writeMsg(w, h, nil); werr != nil {
			fmt.Fprintf(stderr, "framesweep worker: %v\n", werr)
		}
		return 1
	}
	h := &header{Type: msgDone}
	if stats != nil {
		b, merr := json.Marshal(stats)
		if merr != nil {
			fmt.Fprintf(stderr, "framesweep worker: %v\n", merr)
			return 2
		}
		h.Stats = b
	}
	if werr := writeMsg(w, h, nil); werr != nil {
		fmt.Fprintf(stderr, "framesweep worker: %v\n", werr)
		return 2
	}
	return 0
}

// opFunc runs one op, writing "info"/"frame" messages to w, and returns the stats for "done".
type opFunc func(req *Request, w io.Writer) (any, error)

// retained is what the "retain" test op keeps.
var retained [][]byte

// touchBytes allocates n bytes and writes to every page, so they are resident.
func touchBytes(n int64) []byte {
	b := make([]byte, n)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	return b
}

// testOps misbehave on purpose so tests can prove the supervisor contains them. Reachable only with
// FRAMESWEEP_WORKER_TESTOPS=1 in the worker's environment.
var testOps = map[string]func(req *Request, w io.Writer) error{
	// hang: never answers (as a decoder stuck in C would).
	"hang": func(*Request, io.Writer) error {
		for {
			time.Sleep(time.Hour)
		}
	},
	// crash: a SIGSEGV; the Go runtime prints a report and exits with status 2, exactly what a segfault
	// inside FFmpeg (cgo) looks like from outside.
	"crash": func(*Request, io.Writer) error {
		_ = syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		time.Sleep(time.Minute)
		return nil
	},
	// partial: start a frame, then crash mid-payload (the stream is cut where a real crash would cut it).
	"partial": func(_ *Request, w io.Writer) error {
		_ = writeMsg(w, &header{Type: msgFrame, Index: 0, W: 2, H: 2, Bytes: 12}, []byte{1, 2, 3})
		if f, ok := w.(interface{ Flush() error }); ok {
			_ = f.Flush()
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		time.Sleep(time.Minute)
		return nil
	},
	// abort: die by a signal (GOTRACEBACK=crash behaviour), as an abort() with the default handler does.
	"abort": func(*Request, io.Writer) error {
		debug.SetTraceback("crash")
		var p *int
		*p = 1 // deliberate nil dereference
		return nil
	},
	// alloc: touch Arg bytes (default 16 MiB) at a time, forever, until the watchdog kills it.
	"alloc": func(req *Request, _ io.Writer) error {
		step := req.Arg
		if step <= 0 {
			step = 16 << 20
		}
		var hold [][]byte
		for {
			b := make([]byte, step)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			hold = append(hold, b)
			time.Sleep(time.Millisecond)
		}
	},
	// touch: touch Arg bytes, drop them and answer (a job whose peak is high and whose leftovers are not).
	"touch": func(req *Request, _ io.Writer) error {
		touchBytes(req.Arg)
		return nil
	},
	// retain: touch Arg bytes, keep them for the process's life and answer (a job that leaves its worker
	// big).
	"retain": func(req *Request, _ io.Writer) error {
		retained = append(retained, touchBytes(req.Arg))
		return nil
	},
	// spawn: start a child process (in the worker's process group), report its pid, then hang; proves a
	// kill reaches the whole group.
	"spawn": func(_ *Request, w io.Writer) error {
		c := exec.Command("sleep", "300")
		if err := c.Start(); err != nil {
			return err
		}
		if err := writeMsg(w, &header{Type: msgInfo, Info: []byte(strconv.Itoa(c.Process.Pid))}, nil); err != nil {
			return err
		}
		if f, ok := w.(interface{ Flush() error }); ok {
			_ = f.Flush()
		}
		for {
			time.Sleep(time.Hour)
		}
	},
	// linger: answer "done", then keep running instead of exiting.
	"linger": func(_ *Request, w io.Writer) error {
		_ = writeMsg(w, &header{Type: msgDone}, nil)
		if f, ok := w.(interface{ Flush() error }); ok {
			_ = f.Flush()
		}
		for {
			time.Sleep(time.Hour)
		}
	},
	// exit: exit with status Arg without answering.
	"exit": func(req *Request, _ io.Writer) error {
		os.Exit(int(req.Arg))
		return nil
	},
	// garbage: write something that is not the protocol.
	"garbage": func(_ *Request, w io.Writer) error {
		_, _ = io.WriteString(w, "this is not a message\n")
		if f, ok := w.(interface{ Flush() error }); ok {
			_ = f.Flush()
		}
		os.Exit(0)
		return nil
	},
}
