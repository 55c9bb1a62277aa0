package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// swRecord is the part of a sweep record the CLI tests compare.
type swRecord struct {
	ItemID      string             `json:"item_id"`
	Config      string             `json:"config"`
	Status      string             `json:"status"`
	Prediction  string             `json:"prediction"`
	Response    string             `json:"response"`
	Probs       map[string]float64 `json:"probs"`
	InputSHA256 string             `json:"input_sha256"`
}

// swRecords reads RUN/records.jsonl strictly: every line whole, one per pair.
func swRecords(t *testing.T, run string) map[string]swRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(run, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("torn last line: %q", b[bytes.LastIndexByte(b[:len(b)-1], '\n')+1:])
	}
	out := map[string]swRecord{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r swRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		k := r.ItemID + "|" + r.Config
		if _, dup := out[k]; dup {
			t.Fatalf("duplicate record %s", k)
		}
		out[k] = r
	}
	return out
}

func swModel(t *testing.T) string {
	t.Helper()
	rc, out, errs := askCLI("testmodel", "--out", t.TempDir())
	if rc != 0 {
		t.Fatalf("testmodel: %s", errs)
	}
	var tm struct{ Spec string }
	if err := json.Unmarshal([]byte(out), &tm); err != nil {
		t.Fatal(err)
	}
	return tm.Spec + ",threads=1"
}

func swArgs(spec, run string) []string {
	return []string{"sweep", "--grid", "../../examples/sweep-grid.yaml", "--items", "../../examples/items.jsonl",
		"--runtime", spec, "--out", run, "--jobs", "2", "--log-format", "json"}
}

// TestSweepKill9: a real sweep process is SIGKILLed at random moments 20 times, each time followed by
// a --resume (itself killed but for the last); the RUN ends with exactly one record per pair, no torn
// line, and the same predictions, probabilities and inputs as a run never killed.
func TestSweepKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short")
	}
	bin := testenv.Binary(t)
	spec := swModel(t)
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean")
	t0 := time.Now()
	if out, err := exec.Command(bin, swArgs(spec, clean)...).CombinedOutput(); err != nil {
		t.Fatalf("clean run: %v\n%s", err, out)
	}
	full := time.Since(t0)
	want := swRecords(t, clean)

	run := filepath.Join(dir, "killed")
	rng := rand.New(rand.NewPCG(11, 12))
	kills := 0
	for i := 0; i < 20; i++ {
		args := swArgs(spec, run)
		if _, err := os.Stat(filepath.Join(run, "run.json")); err == nil {
			args = append(args, "--resume")
		}
		cmd := exec.Command(bin, args...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(full))))
		if cmd.Process.Signal(syscall.SIGKILL) == nil {
			kills++
		}
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
			t.Fatalf("run %d failed on its own: %v\n%s", i, err, errb.String())
		}
		if _, err := os.Stat(filepath.Join(run, "records.jsonl")); err == nil {
			swRecordsLoose(t, run) // no duplicate, no bad line before the tail
		}
	}
	out, err := exec.Command(bin, append(swArgs(spec, run), "--resume")...).CombinedOutput()
	if err != nil {
		t.Fatalf("final resume: %v\n%s", err, out)
	}
	got := swRecords(t, run)
	if len(got) != len(want) {
		t.Fatalf("%d records after %d kills, %d in the clean run", len(got), kills, len(want))
	}
	for k, w := range want {
		g := got[k]
		if g.Status != w.Status || g.Prediction != w.Prediction || g.Response != w.Response || g.InputSHA256 != w.InputSHA256 || len(g.Probs) != len(w.Probs) {
			t.Fatalf("%s: killed run %+v, clean run %+v", k, g, w)
		}
		for l, p := range w.Probs {
			if g.Probs[l] != p {
				t.Fatalf("%s: P(%s) %v vs %v", k, l, g.Probs[l], p)
			}
		}
	}
	left, _ := filepath.Glob(filepath.Join(run, "scratch", "cas", "*", "*", "*"))
	t.Logf("%d kills over a %.1fs sweep; %d records; %d scratch objects left", kills, full.Seconds(), len(got), len(left))
	if len(left) != 0 {
		t.Errorf("scratch inputs left after the final run: %v", left)
	}
}

// swRecordsLoose checks a killed run's records: only the last line may be torn.
func swRecordsLoose(t *testing.T, run string) {
	t.Helper()
	b := testenv.ReadFile(t, filepath.Join(run, "records.jsonl"))
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		var r swRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("a torn line before the tail: %q", l)
		}
		if seen[r.ItemID+"|"+r.Config] {
			t.Fatalf("duplicate record %s|%s", r.ItemID, r.Config)
		}
		seen[r.ItemID+"|"+r.Config] = true
	}
}

// TestSweepSIGINT: SIGINT lets the answers in flight finish, exits 1 naming --resume, and leaves a RUN
// that --resume completes.
func TestSweepSIGINT(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short")
	}
	bin := testenv.Binary(t)
	spec := swModel(t)
	run := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, swArgs(spec, run)...)
	var errb, outb bytes.Buffer
	cmd.Stderr, cmd.Stdout = &errb, &outb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the first records, then interrupt.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if st, err := os.Stat(filepath.Join(run, "records.jsonl")); err == nil && st.Size() > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitError || !strings.Contains(errb.String(), "--resume") {
		t.Fatalf("interrupted sweep: %v\n%s", err, errb.String())
	}
	var sum struct {
		Stopped        string `json:"stopped"`
		PairsRemaining int    `json:"pairs_remaining"`
	}
	if err := json.Unmarshal(outb.Bytes(), &sum); err != nil || sum.Stopped != "signal" {
		t.Fatalf("summary %s: %v", outb.String(), err)
	}
	swRecords(t, run) // whole lines only
	if out, err := exec.Command(bin, append(swArgs(spec, run), "--resume")...).CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if got := len(swRecords(t, run)); got != 12*9 {
		t.Fatalf("%d records after the resume, want %d", got, 12*9)
	}
}

// swMkdir makes a test directory (and its parents).
func swMkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
