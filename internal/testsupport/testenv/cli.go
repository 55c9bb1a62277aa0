package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The binaries the subprocess tests run. `make test` builds each once and names it in the
// environment, so no test compiles the CLI (docs/testing.md): FRAMESWEEP_BIN is the binary of the
// step the test runs in (race-built in the race step, plain in the integration step),
// FRAMESWEEP_LEAKCHECK_BIN a -tags leakcheck build (every process exits 3 when an FFmpeg object of
// decode is live as its command returns). Without them (a developer's `go test`) the first test that
// asks builds the binary once per test binary, with the build settings of that test binary (-race
// when it is race-built), into bin/test/ of the checkout. FRAMESWEEP_PLAIN_BIN is the plain build in
// every step, for the tests that measure a child's memory or time (the race runtime's shadow memory
// triples a process's RSS).
const (
	BinEnv          = "FRAMESWEEP_BIN"
	LeakcheckBinEnv = "FRAMESWEEP_LEAKCHECK_BIN"
	PlainBinEnv     = "FRAMESWEEP_PLAIN_BIN"
)

var (
	buildMu sync.Mutex
	built   = map[string]string{} // tags → binary built by this test binary
)

// Binary returns the framesweep binary for a subprocess test: $FRAMESWEEP_BIN, or one built once.
func Binary(tb testing.TB) string {
	tb.Helper()
	return binary(tb, BinEnv, "", raceEnabled)
}

// PlainBinary returns a framesweep binary built without the race detector whatever the test binary
// is: $FRAMESWEEP_PLAIN_BIN, or one built once.
func PlainBinary(tb testing.TB) string {
	tb.Helper()
	return binary(tb, PlainBinEnv, "", false)
}

// LeakcheckBinary returns a -tags leakcheck framesweep binary: $FRAMESWEEP_LEAKCHECK_BIN, or one
// built once.
func LeakcheckBinary(tb testing.TB) string {
	tb.Helper()
	return binary(tb, LeakcheckBinEnv, "leakcheck", raceEnabled)
}

func binary(tb testing.TB, env, tags string, race bool) string {
	tb.Helper()
	if b := os.Getenv(env); b != "" {
		if _, err := os.Stat(b); err != nil {
			tb.Fatalf("$%s: %v", env, err)
		}
		return b
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	key := tags + fmt.Sprint(race)
	if b, ok := built[key]; ok {
		return b
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	name := "framesweep"
	args := []string{"build"}
	if race {
		name += "-race"
		args = append(args, "-race")
	}
	if tags != "" {
		name += "-" + tags
		args = append(args, "-tags", tags)
	}
	dir := filepath.Join(root, "bin", "test")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	// Built beside its final name and renamed: test binaries of other packages may build it at once.
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t0 := time.Now()
	cmd := exec.Command("go", append(args, "-o", filepath.Join(tmp, name), "./cmd/framesweep")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go %s (set $%s to skip the build): %v\n%s", strings.Join(args, " "), env, err, out)
	}
	bin := filepath.Join(dir, name)
	if err := os.Rename(filepath.Join(tmp, name), bin); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("built %s in %.1fs ($%s unset)", bin, time.Since(t0).Seconds(), env)
	built[key] = bin
	return bin
}

// Result is how a bounded run of a binary ended.
type Result struct {
	Code           int
	Stdout, Stderr string
	Took           time.Duration
}

// Run runs bin with args (and env added to the test's environment), and fails the test on a hang
// (still running after bound: the process is killed) or a crash (ended by a signal). Any exit status
// is returned for the test to judge.
func Run(tb testing.TB, bound time.Duration, env []string, bin string, args ...string) Result {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	res := Result{Stdout: out.String(), Stderr: errb.String(), Took: time.Since(t0)}
	if ctx.Err() != nil {
		tb.Fatalf("%s %v: still running after %v (hang)", filepath.Base(bin), args, bound)
	}
	if cmd.ProcessState == nil {
		tb.Fatalf("%s %v: %v", filepath.Base(bin), args, err)
	}
	if ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		tb.Fatalf("%s %v: killed by %v (crash)\n%s", filepath.Base(bin), args, ws.Signal(), res.Stderr)
	}
	res.Code = cmd.ProcessState.ExitCode()
	return res
}
