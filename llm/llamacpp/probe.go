package llamacpp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/rgb"
)

// The second wall. The Go checks (gguf.go, textcheck.go, clipcheck.go) cover the invariants found so
// far, but llama.cpp and mtmd assert many more. So the first load of a model file (with its projector)
// runs in a child process, the executable itself re-run with envProbeChild set: it loads the pair on
// the CPU and answers a question on text alone, then on two frames as images and, when the family
// has a video path, as a video, then exits. An abort there (GGML_ASSERT, SIGSEGV) becomes one error naming the file and the
// assertion, and this process goes on. A pair that passed is remembered for the process and, across
// processes, by its files' identity in the user's cache directory.

// EnvProbe selects the load probe: "" (once per pair of files, remembered), "always" (every load, the
// cache unused), "off" (no probe: a file that aborts llama.cpp then ends this process, in one line).
const EnvProbe = "FRAMESWEEP_LLAMA_PROBE"

// envProbeChild marks the probe's child process (set by probe, never by a user).
const envProbeChild = "FRAMESWEEP_LLAMA_PROBE_CHILD"

// probeAbortExit is the child's exit status after an abort (its one line is on stderr).
const probeAbortExit = 3

// init turns the process into the probe's child when the parent asked for one: before main, so any
// binary that links this package (framesweep, a test binary) can serve as its own probe.
func init() {
	if os.Getenv(envProbeChild) == "1" {
		os.Exit(probeChild(os.Stdin, os.Stdout))
	}
}

// probeRequest is what the parent sends the child on stdin.
type probeRequest struct {
	Model  string `json:"model"`
	Mmproj string `json:"mmproj,omitempty"`
}

// probeReply is one stdout line of the child: the stage it entered (and the file that stage is
// blamed on), or a handled error.
type probeReply struct {
	Stage string `json:"stage"` // "model", "mmproj", "text", "frames", "error", "done"
	Path  string `json:"path,omitempty"`
	Error string `json:"error,omitempty"`
}

// probeChild loads the pair and answers once; 0 when it worked, 1 with a handled error.
func probeChild(stdin io.Reader, stdout io.Writer) int {
	abortExit = probeAbortExit
	var req probeRequest
	if err := json.NewDecoder(io.LimitReader(stdin, 1<<16)).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "llamacpp probe: reading the request: %v\n", err)
		return 2
	}
	say := func(r probeReply) {
		b, _ := json.Marshal(r)
		fmt.Fprintf(stdout, "%s\n", b)
	}
	// The stage is written before each step, so a crash leaves the step it died in last.
	say(probeReply{Stage: "model", Path: req.Model})
	// chatml: a template llama.cpp's formatter does not know would be a handled error, and the
	// questions below must still run. Up to 8 threads: the parent waits, and a real model's first
	// answers on one thread take long.
	threads := min(runtime.NumCPU(), 8)
	rt, err := newRuntime(req.Model, req.Mmproj, Options{Threads: threads, Context: 1024, Chat: ChatML}, false, func(stage, path string) {
		say(probeReply{Stage: stage, Path: path})
	})
	if err != nil {
		say(probeReply{Stage: "error", Error: err.Error()})
		return 1
	}
	defer rt.Close()
	// Text alone first: a crash while only the text model ran is the model's; one after it, with
	// frames, the projector's.
	for i, r := range probeRequests(rt) {
		if i == 0 {
			say(probeReply{Stage: "text", Path: req.Model})
		} else if i == 1 {
			say(probeReply{Stage: "frames", Path: req.Mmproj})
		}
		if _, err := rt.Answer(context.Background(), r); err != nil {
			say(probeReply{Stage: "error", Error: err.Error()})
			return 1
		}
	}
	say(probeReply{Stage: "done"})
	return 0
}

// probeRequests are the child's questions: text alone, then (with a projector) two frames as images
// and, for a family with a video path, as a video (temporal pairs, its own layout).
func probeRequests(rt *Runtime) []*llm.Request {
	q := func(frames []*rgb.Image, v *llm.VideoTiming) *llm.Request {
		return &llm.Request{Frames: frames, Question: "?", Options: []string{"A. a", "B. b"}, MaxTokens: 2, Video: v}
	}
	out := []*llm.Request{q(nil, nil)}
	if rt.mtmd == nil {
		return out
	}
	frames := []*rgb.Image{rgb.New(64, 48), rgb.New(64, 48)}
	for i, f := range frames {
		for j := range f.Pix {
			f.Pix[j] = byte(j*7 + i*31)
		}
	}
	out = append(out, q(frames, nil))
	if rt.video != noVideo {
		out = append(out, q(frames, &llm.VideoTiming{TimestampsS: []float64{0, 0.5}, SourceFPS: 2, TotalFrames: 2}))
	}
	return out
}

// probes remembers each pair's outcome in this process.
var probes = struct {
	sync.Mutex
	m map[string]*probeResult
}{m: map[string]*probeResult{}}

type probeResult struct {
	done chan struct{}
	err  error
}

// probe runs the load probe for a pair of files once per process (and, when it passes, once per
// identity of the files across processes). Concurrent callers with the same pair wait for one probe.
func probe(model, mmproj string) error {
	mode := os.Getenv(EnvProbe)
	if mode == "off" {
		return nil
	}
	if mode != "" && mode != "always" {
		return llm.Errorf("load model", model, llm.ErrBadSpec, "%s=%q (want always or off, or leave it unset)", EnvProbe, mode)
	}
	key, size, err := probeKey(model, mmproj)
	if err != nil {
		return llm.Errorf("load model", model, llm.ErrModel, "%v", err)
	}
	probes.Lock()
	r, ok := probes.m[key]
	if !ok {
		r = &probeResult{done: make(chan struct{})}
		probes.m[key] = r
	}
	probes.Unlock()
	if ok {
		<-r.done
		return r.err
	}
	defer close(r.done)
	cache := probeCacheDir()
	if mode == "" && cache != "" {
		if _, err := os.Stat(filepath.Join(cache, key)); err == nil {
			return nil
		}
	}
	r.err = runProbe(model, mmproj, probeTimeout(size))
	if r.err == errProbeHandled {
		r.err = nil
	} else if r.err == nil && cache != "" {
		rememberProbe(cache, key, model, mmproj)
	}
	return r.err
}

// errProbeHandled: the child ended with a handled error, which the load here will report itself.
var errProbeHandled = errors.New("the load probe ended with a handled error")

// probeTimeout bounds the child by the bytes it maps: a minute, plus 30 s per GiB.
func probeTimeout(size int64) time.Duration {
	return time.Minute + time.Duration(size>>20)*30*time.Second/1024
}

// probeKey names a pair of files by identity (path, device, inode, size, modification time) and the
// llama.cpp build; size is the pair's bytes.
func probeKey(model, mmproj string) (key string, size int64, err error) {
	h := sha256.New()
	fmt.Fprintf(h, "framesweep llama probe 1\x00%s\x00", Release)
	if v, c := LinkedGGML(); v != "" {
		fmt.Fprintf(h, "%s %s\x00", v, c)
	}
	for _, p := range []string{model, mmproj} {
		if p == "" {
			h.Write([]byte{0})
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", 0, err
		}
		st, err := os.Stat(abs)
		if err != nil {
			return "", 0, err
		}
		var dev, ino uint64
		if s, ok := st.Sys().(*syscall.Stat_t); ok {
			dev, ino = uint64(s.Dev), s.Ino
		}
		fmt.Fprintf(h, "%s\x00%d %d %d %d\x00", abs, dev, ino, st.Size(), st.ModTime().UnixNano())
		size += st.Size()
	}
	return hex.EncodeToString(h.Sum(nil)), size, nil
}

// probeCacheDir is where passed probes are remembered ("" when there is no user cache directory).
func probeCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "framesweep", "llama-probe")
}

// rememberProbe records a passed probe (best effort: a cache that cannot be written costs a probe
// next time) and drops records older than 30 days.
func rememberProbe(dir, key, model, mmproj string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > 30*24*time.Hour {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	tmp, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return
	}
	fmt.Fprintf(tmp, "%s\n%s\n", model, mmproj)
	if tmp.Close() != nil || os.Rename(tmp.Name(), filepath.Join(dir, key)) != nil {
		os.Remove(tmp.Name())
	}
}

// runProbe runs the child and turns how it ended into nil or one error naming the file.
func runProbe(model, mmproj string, timeout time.Duration) error {
	exe, err := os.Executable()
	if err != nil {
		return llm.Errorf("load model", model, llm.ErrModel, "cannot start the load probe: %v", err)
	}
	req, _ := json.Marshal(probeRequest{Model: model, Mmproj: mmproj})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	// The child runs the libraries this process runs: their folder first on its search path.
	ld := LibDir()
	if v := os.Getenv("LD_LIBRARY_PATH"); v != "" {
		ld += string(filepath.ListSeparator) + v
	}
	cmd.Env = append(os.Environ(), envProbeChild+"=1", "GGML_NO_BACKTRACE=1", "GOTRACEBACK=single", "LD_LIBRARY_PATH="+ld)
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr headBuf
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Its own process group, killed whole on the deadline; it dies with this process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	runErr := cmd.Run()
	last := lastReply(stdout.String())
	if runErr == nil && last.Stage == "done" {
		return nil
	}
	if last.Stage == "error" && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 1 {
		// A handled failure (a mismatched pair, a context llama.cpp refuses): no crash, and the load
		// in this process reports it with this process's options. Not remembered as passed.
		return errProbeHandled
	}
	path := model
	if p := lastPath(stdout.String()); p != "" {
		path = p
	}
	if ctx.Err() != nil {
		return llm.Errorf("load model", path, llm.ErrModel, "llama.cpp did not finish loading it within %s (load probe killed)", timeout)
	}
	if cmd.ProcessState == nil {
		return llm.Errorf("load model", path, llm.ErrModel, "cannot run the load probe: %v", runErr)
	}
	return llm.Errorf("load model", path, llm.ErrModel, "%s (in the load probe, stage %s; this process goes on)", crashCause(stderr.String(), cmd.ProcessState), last.Stage)
}

// lastReply is the last well-formed reply line.
func lastReply(out string) probeReply {
	var r probeReply
	for _, line := range strings.Split(out, "\n") {
		var x probeReply
		if json.Unmarshal([]byte(line), &x) == nil && x.Stage != "" {
			r = x
		}
	}
	return r
}

// lastPath is the file of the last stage that named one.
func lastPath(out string) string {
	p := ""
	for _, line := range strings.Split(out, "\n") {
		var x probeReply
		if json.Unmarshal([]byte(line), &x) == nil && x.Path != "" {
			p = x.Path
		}
	}
	return p
}

// crashCause is the one-line cause of the child's end: ggml's abort line, a C++ terminate message,
// or the signal.
func crashCause(stderr string, ps *os.ProcessState) string {
	lines := strings.Split(stderr, "\n")
	for _, l := range lines {
		if _, msg, ok := strings.Cut(l, "llama.cpp aborted: "); ok {
			return "llama.cpp aborted: " + strings.TrimSpace(msg)
		}
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "terminate called") {
			msg := strings.TrimSpace(l)
			if i+1 < len(lines) && strings.Contains(lines[i+1], "what():") {
				msg += ": " + strings.TrimSpace(lines[i+1])
			}
			return "llama.cpp terminated: " + msg
		}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "llama.cpp crashed: signal " + ws.Signal().String()
	}
	for _, l := range lines { // Go's report of a signal in C code: "[signal SIGSEGV: segmentation violation …]"
		if strings.HasPrefix(l, "[signal ") || strings.HasPrefix(l, "SIGSEGV") || strings.HasPrefix(l, "SIGBUS") || strings.HasPrefix(l, "SIGFPE") || strings.HasPrefix(l, "SIGILL") || strings.HasPrefix(l, "SIGABRT") {
			return "llama.cpp crashed: " + strings.Trim(strings.TrimSpace(l), "[]")
		}
		// Under -asan the sanitizer reports the signal itself: "==N==ERROR: AddressSanitizer: SEGV on …".
		if _, msg, ok := strings.Cut(l, "ERROR: AddressSanitizer: "); ok {
			return "llama.cpp crashed: AddressSanitizer: " + strings.TrimSpace(msg)
		}
	}
	last := ""
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			last = l
		}
	}
	if last != "" {
		return fmt.Sprintf("the load probe ended with %s: %s", ps, last)
	}
	return fmt.Sprintf("the load probe ended with %s", ps)
}

// headBuf keeps the first 64 KiB written to it (the stage lines and the abort line come early; a Go
// traceback after them is noise).
type headBuf struct{ b bytes.Buffer }

func (h *headBuf) Write(p []byte) (int, error) {
	if room := 64<<10 - h.b.Len(); room > 0 {
		h.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (h *headBuf) String() string { return h.b.String() }
