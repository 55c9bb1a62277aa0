package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// stallServer is an OpenAI-compatible server on 127.0.0.1 that lists model "m" and never answers a
// chat request (until the client goes); it notes when each arrived.
type stallServer struct {
	*httptest.Server
	mu       sync.Mutex
	arrivals []time.Time
}

func newStallServer(t *testing.T) *stallServer {
	ss := &stallServer{}
	ss.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"data":[{"id":"m"}]}`)
			return
		}
		io.Copy(io.Discard, r.Body)
		ss.mu.Lock()
		ss.arrivals = append(ss.arrivals, time.Now())
		ss.mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Minute):
		}
	}))
	t.Cleanup(ss.Close)
	return ss
}

// count is how many chat requests arrived, and how many of them after t.
func (ss *stallServer) count(t time.Time) (all, after int) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, a := range ss.arrivals {
		if a.After(t) {
			after++
		}
	}
	return len(ss.arrivals), after
}

// TestSweepSignalStalledServer: a real sweep process against an OpenAI-compatible server on
// 127.0.0.1 that never answers. SIGINT (then, on a new RUN, SIGTERM) once 4 requests are in flight:
// the server receives no request after the signal, the answers in flight are cancelled after
// --stop-grace, and the process exits 1 naming --resume well within the grace plus a generous slack
// (a loaded CI machine), with run.json noting the stop.
func TestSweepSignalStalledServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testenv.Binary(t)
	dir := t.TempDir()
	grid := filepath.Join(dir, "grid.yaml")
	testenv.WriteFile(t, grid, []byte("frames: [2]\npolicies: [uniform]\nresolutions: [\"64x48\"]\npipelines: [raw]\ntext_only: true\n"))
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		signalStalledSweep(t, bin, grid, filepath.Join(dir, "run-"+sig.String()), sig)
	}
}

// signalStalledSweep runs one sweep into run against a new stalling server and signals it once 4
// requests are in flight.
func signalStalledSweep(t *testing.T, bin, grid, run string, sig os.Signal) {
	const grace = time.Second
	ss := newStallServer(t)
	cmd := exec.Command(bin, "sweep", "--grid", grid, "--items", "../../examples/items.jsonl", "--runtime", "openai:url="+ss.URL+"/v1,model=m,concurrency=4",
		"--out", run, "--stop-grace", grace.String(), "--log-format", "json")
	var errb, outb bytes.Buffer
	cmd.Stderr, cmd.Stdout = &errb, &outb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if n, _ := ss.count(time.Now()); n >= 4 {
			break
		} else if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%v: %d requests in flight after 60 s, want 4\n%s", sig, n, errb.String())
		}
	}
	time.Sleep(300 * time.Millisecond) // the other pairs queue up behind the 4
	signalled := time.Now()
	cmd.Process.Signal(sig)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(grace + 30*time.Second):
		cmd.Process.Kill()
		t.Fatalf("%v: still running %v after the signal", sig, grace+30*time.Second)
	}
	took := time.Since(signalled)
	total, after := ss.count(signalled)
	t.Logf("%v: exited %v after the signal; %d requests in all, %d after it", sig, took, total, after)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitError || !strings.Contains(errb.String(), "--resume") {
		t.Fatalf("%v: %v\n%s", sig, err, errb.String())
	}
	if after != 0 || total != 4 {
		t.Errorf("%v: %d requests sent after the signal (%d in all, want the 4 in flight)", sig, after, total)
	}
	if took < grace {
		t.Errorf("%v: exited %v after the signal, before the grace of %v", sig, took, grace)
	}
	var ri struct {
		Sessions []struct{ Stopped string } `json:"sessions"`
	}
	if err := json.Unmarshal(testenv.ReadFile(t, filepath.Join(run, "run.json")), &ri); err != nil || len(ri.Sessions) != 1 || ri.Sessions[0].Stopped != "signal" {
		t.Errorf("%v: run.json sessions %+v %v", sig, ri.Sessions, err)
	}
}
