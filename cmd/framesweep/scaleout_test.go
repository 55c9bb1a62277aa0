package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testsupport/s3test"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/runs"
)

// s3Records reads a RUN through the sweep's reader (directory or bucket), strictly: whole lines, one
// record per pair.
func s3Records(t *testing.T, loc string) map[string]swRecord {
	t.Helper()
	ctx := context.Background()
	rr, err := runs.Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	srcs, err := rr.Sources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]swRecord{}
	for _, s := range srcs {
		rc, err := rr.OpenSource(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(rc)
		rc.Close()
		if b.Len() > 0 && b.Bytes()[b.Len()-1] != '\n' {
			t.Fatalf("%s: a chunk without its newline", s)
		}
		sc := bufio.NewScanner(&b)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r swRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: bad line %q: %v", s, sc.Text(), err)
			}
			k := r.ItemID + "|" + r.Config
			if _, dup := out[k]; dup {
				t.Fatalf("%s: duplicate record %s", s, k)
			}
			out[k] = r
		}
	}
	return out
}

func sameRecords(t *testing.T, what string, got, want map[string]swRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for k, w := range want {
		g := got[k]
		if g.Status != w.Status || g.Prediction != w.Prediction || g.Response != w.Response || g.InputSHA256 != w.InputSHA256 || len(g.Probs) != len(w.Probs) {
			t.Fatalf("%s: %s: %+v, want %+v", what, k, g, w)
		}
		for l, p := range w.Probs {
			if g.Probs[l] != p {
				t.Fatalf("%s: %s: P(%s) %v vs %v", what, k, l, g.Probs[l], p)
			}
		}
	}
}

// TestSweepKill9ObjectStore: a real sweep process writing its RUN to an S3 prefix (the real S3 client
// over HTTP to gofakes3 on 127.0.0.1, its memory backend behind it) is SIGKILLed at random moments 8 times,
// each followed by --resume, with its input cache on the same bucket; the final resume ends with one
// record per pair, in whole chunks, equal to a local run never killed, and the cache verifies clean. `framesweep audit` reads the RUN from the bucket, and `framesweep merge`
// copies it into a local RUN that audits too.
func TestSweepKill9ObjectStore(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin := testenv.Binary(t)
	srv := s3test.Start(t)
	spec := swModel(t)
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean")
	t0 := time.Now()
	if out, err := exec.Command(bin, swArgs(spec, clean)...).CombinedOutput(); err != nil {
		t.Fatalf("clean run: %v\n%s", err, out)
	}
	full := time.Since(t0)
	want := swRecords(t, clean)

	run, cacheURL := srv.URL("runs/killed"), srv.URL("cache")
	env := append(os.Environ(), srv.Env()...)
	args := func() []string {
		return append(swArgs(spec, run), "--chunk-records", "8", "--chunk-interval", "200ms", "--resume", "--cache", cacheURL)
	}
	chunks := func() int {
		rr, err := runs.Open(context.Background(), run)
		if err != nil {
			return 0
		}
		defer rr.Close()
		srcs, _ := rr.Sources(context.Background())
		return len(srcs)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	kills := 0
	for i := 0; i < 8; i++ {
		before := chunks()
		cmd := exec.Command(bin, args()...)
		cmd.Env = env
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		var err error
		wait := time.Duration(rng.Int64N(int64(full))) // anywhere: start-up, decoding, answering
		if i%2 == 1 {
			// Right after this session published a chunk, so kills also cut sessions that wrote some.
			wait = 30 * time.Second
			for deadline := time.Now().Add(wait); chunks() == before && len(exited) == 0 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			wait = time.Duration(rng.Int64N(int64(100 * time.Millisecond)))
		}
		select {
		case err = <-exited: // finished on its own
		case <-time.After(wait):
			if cmd.Process.Signal(syscall.SIGKILL) == nil {
				kills++
			}
			err = <-exited
		}
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
			t.Fatalf("run %d failed on its own: %v\n%s", i, err, errb.String())
		}
	}
	cmd := exec.Command(bin, args()...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("final resume: %v\n%s", err, out)
	}
	got := s3Records(t, run)
	sameRecords(t, "killed object-store run", got, want)
	// The kills must have cut sessions that had published chunks, or the test proved nothing.
	rr, err := runs.Open(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	srcs, _ := rr.Sources(context.Background())
	rr.Close()
	writers := map[string]bool{}
	for _, s := range srcs {
		writers[strings.SplitN(strings.TrimPrefix(s, "records/"), "-", 2)[0]] = true
	}
	t.Logf("%d kills over a %.1fs sweep; %d records in %d chunks from %d sessions", kills, full.Seconds(), len(got), len(srcs), len(writers))
	if len(writers) < 2 {
		t.Errorf("only %d session(s) published chunks: no kill landed after a chunk", len(writers))
	}

	// The input cache on the bucket, written by killed sessions too, verifies clean.
	vc := exec.Command(bin, "verify", cacheURL)
	vc.Env = env
	if out, err := vc.CombinedOutput(); err != nil {
		t.Fatalf("verify of the bucket cache: %v\n%s", err, out)
	}

	// audit reads the bucket; merge copies it into a directory that audits the same.
	audit := func(loc string) string {
		c := exec.Command(bin, "audit", loc, "--json", "--resamples", "0")
		c.Env = env
		out, err := c.Output()
		if err != nil {
			t.Fatalf("audit %s: %v", loc, err)
		}
		var res struct {
			Items int `json:"items"`
		}
		if err := json.Unmarshal(out, &res); err != nil || res.Items != 12 {
			t.Fatalf("audit %s: %d items (%v)", loc, res.Items, err)
		}
		return string(out)
	}
	fromBucket := audit(run)
	local := filepath.Join(dir, "copy")
	c := exec.Command(bin, "merge", run, "--out", local)
	c.Env = env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	sameRecords(t, "merged copy", swRecords(t, local), want)
	if fromBucket != audit(local) {
		t.Error("the audit of the bucket RUN differs from the audit of its local copy")
	}
}

// TestMergeCLI: three shard sweeps (the first 5 items) through the CLI merge into a RUN equal to one
// sweep, which audits and resumes with nothing left (its usage and handled errors: TestUsageErrors).
func TestMergeCLI(t *testing.T) {
	if testing.Short() {
		return
	}
	spec := swModel(t)
	dir := t.TempDir()
	var shards []string
	for i := range 3 {
		out := filepath.Join(dir, "shard", string(rune('0'+i)))
		if rc, _, errs := runCLI(append(swArgs(spec, out), "--limit", "5", "--shard", []string{"0/3", "1/3", "2/3"}[i])...); rc != exitOK {
			t.Fatalf("shard %d: %s", i, errs)
		}
		shards = append(shards, out)
	}
	one := filepath.Join(dir, "one")
	if rc, _, errs := runCLI(append(swArgs(spec, one), "--limit", "5")...); rc != exitOK {
		t.Fatal(errs)
	}
	merged := filepath.Join(dir, "merged")
	rc, out, errs := runCLI(append(append([]string{"merge"}, shards...), "--out", merged)...)
	var sum runs.MergeSummary
	// The shards swept the first 5 items (--limit 5): the pairs are counted against those of the items file.
	if rc != exitOK || json.Unmarshal([]byte(out), &sum) != nil || !sum.Complete || sum.PairsMissing == nil || *sum.PairsMissing != 0 || *sum.PairsExpected != 5*9 || sum.Duplicates != 0 {
		t.Fatalf("merge: rc %d %s %s", rc, out, errs)
	}
	sameRecords(t, "merged shards", swRecords(t, merged), swRecords(t, one))
	if rc, _, errs := runCLI("audit", merged, "--json", "--resamples", "0"); rc != exitOK {
		t.Fatalf("audit of the merged RUN: %s", errs)
	}
	if rc, out, errs := runCLI(append(swArgs(spec, merged), "--limit", "5", "--resume")...); rc != exitOK || !strings.Contains(out, `"pairs_done": 0`) {
		t.Fatalf("resume of the merged RUN: %s %s", out, errs)
	}
}
