package sweep

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

// mountTmpfs mounts a tmpfs of size bytes at a new directory (root only; skipped on a laptop, a
// failure under CI=true) and returns it and a function that resizes it. The test unmounts it.
func mountTmpfs(t *testing.T, size string) (string, func(size string)) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Missing(t, "mounting a small filesystem needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.Missing(t, "mount -t tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir, func(size string) {
		t.Helper()
		if out, err := exec.Command("mount", "-o", "remount,size="+size, dir).CombinedOutput(); err != nil {
			t.Fatalf("remount: %v %s", err, out)
		}
	}
}

// readLoose reads RUN/records.jsonl of an interrupted session: every whole line a record, a torn last
// line allowed.
func readLoose(t testing.TB, run string) []record.Full {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(run, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.LastIndexByte(string(b), '\n'); i+1 < len(b) {
		b = b[:i+1] // the torn tail the next --resume cuts
	}
	var out []record.Full
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r record.Full
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// TestSweepFullDisk: with the --cache, or the RUN and its scratch store, on a filesystem that fills up
// (a real tmpfs of 256 KiB), the session stops with the full disk's error (ENOSPC) and records no
// pair as failed — text-only pairs included; once the filesystem has room, --resume answers every pair
// left and ends with exactly one answer per pair.
func TestSweepFullDisk(t *testing.T) {
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	for _, where := range []string{"cache", "run"} {
		t.Run(where, func(t *testing.T) {
			fsDir, resize := mountTmpfs(t, "256k")
			o := testOptions(t, filepath.Join(t.TempDir(), "run"), rt, sp, testGrid)
			if where == "cache" {
				store, err := cache.Open(ctx, fsDir)
				if err != nil {
					t.Fatal(err)
				}
				defer store.Close()
				o.Cache = store
			} else {
				o.Out, o.InputMemory = filepath.Join(fsDir, "run"), 1 // every input through RUN/scratch
			}
			sum, err := Run(ctx, nil, o)
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("a full disk: %v (%+v)", err, sum)
			}
			first := readLoose(t, o.Out)
			for _, r := range first {
				if r.Status != record.StatusOK {
					t.Errorf("a full disk became the error record of %s %s: %s", r.ItemID, r.Config, r.Error)
				}
			}
			n := len(o.Items.Items) * len(o.Grid.Configs)
			if len(first) >= n {
				t.Fatalf("the disk never filled: %d records of %d pairs", len(first), n)
			}
			resize("64m")
			o.Resume = true
			sum, err = Run(ctx, nil, o)
			if err != nil || sum.PairsFailed != 0 || sum.PairsDone+sum.PairsRecorded != n {
				t.Fatalf("resume after the disk has room: %+v %v", sum, err)
			}
			recs := readRun(t, o.Out)
			if len(recs) != n {
				t.Fatalf("%d records for %d pairs", len(recs), n)
			}
			t.Logf("%s: %d of %d pairs recorded before the disk was full", where, len(first), n)
		})
	}
}

// flipObjectByte flips one byte in the middle of every object of a cache directory (its size and
// header unchanged, so only a full read sees it).
func flipObjectByte(t testing.TB, dir string) int {
	t.Helper()
	objs, _ := filepath.Glob(filepath.Join(dir, "cas", "sha256", "*", "*"))
	for _, p := range objs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-len(b)/4] ^= 0x40
		testenv.WriteFile(t, p, b)
	}
	return len(objs)
}

// TestSweepCorruptCacheObject: a --cache whose objects were damaged after they were written (one bit
// in the tensor data, size and header intact) fails no pair: each damaged input is built again, fed,
// and written again, as serve rebuilds one; the answers and inputs are those of the sweep that wrote
// the cache.
func TestSweepCorruptCacheObject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	dir := t.TempDir()
	store, err := cache.Open(ctx, filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	a := testOptions(t, filepath.Join(dir, "a"), rt, sp, testGrid)
	a.Limit, a.Cache = 4, store
	if _, err := Run(ctx, nil, a); err != nil {
		t.Fatal(err)
	}
	if flipObjectByte(t, filepath.Join(dir, "cache")) == 0 {
		t.Fatal("the sweep wrote no object: nothing to damage")
	}
	for _, mem := range []int64{0, 1} { // fed from memory once rebuilt; and through the store again
		b := testOptions(t, filepath.Join(dir, "b", string(rune('0'+mem))), rt, sp, testGrid)
		b.Limit, b.Cache, b.InputMemory = 4, store, mem
		sum, err := Run(ctx, nil, b)
		if err != nil || sum.PairsFailed != 0 {
			t.Fatalf("a sweep on a damaged cache: %+v %v", sum, err)
		}
		ra, rb := readRun(t, a.Out), readRun(t, b.Out)
		for k, x := range ra {
			if y := rb[k]; y.Status != record.StatusOK || y.InputSHA256 != x.InputSHA256 || y.Prediction != x.Prediction {
				t.Fatalf("%v: %s %q %s, the first sweep fed %s", k, y.Status, y.Error, y.InputSHA256, x.InputSHA256)
			}
			if x.InputKey == "" {
				continue
			}
			if in, _, err := pipeline.LoadInput(ctx, store, x.InputKey); err != nil || sha(in.Tensor.Data) != x.InputSHA256 {
				t.Fatalf("%v: the object after the rebuild: %v", k, err)
			}
		}
		if mem == 0 {
			flipObjectByte(t, filepath.Join(dir, "cache"))
		}
	}
}

// faultRuntime answers through a real runtime, but fails the requests fail picks with its error (as
// the openai client reports a server that is down: llm.ErrServer after its retries).
type faultRuntime struct {
	llm.Runtime
	fail  func(req *llm.Request) error
	calls atomic.Int64
}

func (f *faultRuntime) Answer(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	f.calls.Add(1)
	if err := f.fail(req); err != nil {
		return nil, err
	}
	return f.Runtime.Answer(ctx, req)
}

// TestSweepRetryErrors: error records carry their kind; --resume asks the transient ones again (a
// server that was down), --retry-errors every failed pair; the new records supersede the errors
// for the audit and merge, and a last resume has nothing to do.
func TestSweepRetryErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	down, tooLong := "What is between the camera", "Is the scene indoors"
	var healthy atomic.Bool
	fr := &faultRuntime{Runtime: rt, fail: func(req *llm.Request) error {
		switch {
		case strings.HasPrefix(req.Question, down) && !healthy.Load():
			return llm.Errorf("answer", "http://127.0.0.1:1", llm.ErrServer, "HTTP 503: overloaded")
		case strings.HasPrefix(req.Question, tooLong) && !healthy.Load():
			return llm.Errorf("answer", "", llm.ErrContextTooLong, "4100 tokens")
		}
		return nil
	}}
	o := testOptions(t, filepath.Join(t.TempDir(), "run"), fr, sp, testGrid)
	o.Limit = 3
	nc := len(o.Grid.Configs)
	sum, err := Run(ctx, nil, o)
	if err != nil || sum.PairsFailed != 2*nc {
		t.Fatalf("first session: %+v %v", sum, err)
	}
	for k, r := range readRun(t, o.Out) {
		want := map[string]string{"bear-2": record.ErrorTransient, "bear-3": record.ErrorRuntime}[k.Item]
		if r.ErrorKind != want || (want == "") != (r.Status == record.StatusOK) {
			t.Fatalf("%v: status %s error_kind %q, want %q", k, r.Status, r.ErrorKind, want)
		}
	}
	healthy.Store(true)
	o.Resume = true
	sum, err = Run(ctx, nil, o)
	if err != nil || sum.PairsRetried != nc || sum.PairsDone != nc || sum.PairsRecorded != 2*nc {
		t.Fatalf("resume: the transient errors are asked again, the others not: %+v %v", sum, err)
	}
	recs, err := record.ReadPaths([]string{o.Out})
	if err != nil || len(recs) != 3*nc {
		t.Fatalf("the audit's reading: %d records %v", len(recs), err)
	}
	res, err := audit.Analyze(recs, audit.DefaultOptions())
	if err != nil || res.ErrorRecords.Count != nc {
		t.Fatalf("audit after the resume: %+v %v", res.ErrorRecords, err)
	}
	o.RetryErrors = true
	if sum, err = Run(ctx, nil, o); err != nil || sum.PairsRetried != nc || sum.PairsDone != nc {
		t.Fatalf("--retry-errors: %+v %v", sum, err)
	}
	o.RetryErrors = false
	calls := fr.calls.Load()
	if sum, err = Run(ctx, nil, o); err != nil || sum.PairsDone != 0 || sum.PairsRecorded != 3*nc || fr.calls.Load() != calls {
		t.Fatalf("a last resume: %+v %v", sum, err)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	ms, err := runs.Merge(ctx, runs.MergeOptions{Runs: []string{o.Out}, Out: merged})
	if err != nil || ms.Pairs != 3*nc || ms.Failed != 0 || ms.Superseded != 2*nc {
		t.Fatalf("merge of the retried RUN: %+v %v", ms, err)
	}
	if got := readRun(t, merged); len(got) != 3*nc {
		t.Fatalf("merged: %d records", len(got))
	}
}

// TestSweepCancelled: an answer cancelled — the session's context cancelled under it (a second
// signal), or a runtime that reports a cancellation of its own — is no record: the session says so
// and --resume answers those pairs.
func TestSweepCancelled(t *testing.T) {
	t.Parallel()
	rt, sp := tinyRuntime(t)
	for _, how := range []string{"context", "runtime"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var n atomic.Int64
			var once sync.Once
			fr := &faultRuntime{Runtime: rt, fail: func(*llm.Request) error {
				if n.Add(1) == 7 {
					if how == "context" {
						once.Do(cancel)
						return ctx.Err()
					}
					return context.Canceled
				}
				return nil
			}}
			o := testOptions(t, filepath.Join(t.TempDir(), "run"), fr, sp, testGrid)
			o.Limit = 3
			if _, err := Run(ctx, nil, o); err == nil || !errors.Is(err, context.Canceled) && how == "context" {
				t.Fatalf("a cancelled session ended with %v", err)
			}
			for _, r := range readLoose(t, o.Out) {
				if r.Status != record.StatusOK {
					t.Fatalf("a cancellation became the error record of %s %s: %s", r.ItemID, r.Config, r.Error)
				}
			}
			o.Resume = true
			sum, err := Run(context.Background(), nil, o)
			if nn := len(o.Grid.Configs) * 3; err != nil || len(readRun(t, o.Out)) != nn || sum.PairsFailed != 0 {
				t.Fatalf("resume: %+v %v", sum, err)
			}
		})
	}
}

// TestSweepRefusesUnknownTemplate: an items file whose item names a template no runtime renders is
// refused before the RUN is written (every pair of it would fail alike).
func TestSweepRefusesUnknownTemplate(t *testing.T) {
	t.Parallel()
	o := testOptions(t, filepath.Join(t.TempDir(), "run"), &faultRuntime{}, llm.Spec{}, testGrid)
	o.Items.Items[1].Template = "nonesuch"
	if _, err := Run(context.Background(), nil, o); err == nil || !strings.Contains(err.Error(), `template "nonesuch"`) || !strings.Contains(err.Error(), o.Items.Path) {
		t.Fatalf("an unknown template: %v", err)
	}
	if _, err := os.Stat(o.Out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused sweep wrote %s (%v)", o.Out, err)
	}
}
