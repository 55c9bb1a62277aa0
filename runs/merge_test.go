//go:build cgo

// These tests sweep through llama.cpp (cgo): a CGO_ENABLED=0 build of the package, such as
// scripts/fuzz.sh makes for FuzzScanRecords, leaves them out.

package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/internal/testsupport/s3test"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
	"github.com/framesweep/framesweep/sweep"
)

// rewriteLines applies fn to every record line of a records file (fn sees the decoded record).
func rewriteLines(t testing.TB, path string, fn func(i int, m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		fn(i, m)
		nb, _ := json.Marshal(m)
		out = append(append(out, nb...), '\n')
	}
	testenv.WriteFile(t, path, out)
}

func copyRun(t testing.TB, from, to string) {
	t.Helper()
	mustMkdir(t, to)
	for _, f := range []string{"run.json", "records.jsonl"} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		testenv.WriteFile(t, filepath.Join(to, f), b)
	}
}

// TestMerge: three shard RUNs (one of them on an object store) merge into a RUN equal to a single run
// of the sweep, pair for pair; it audits and resumes (nothing left). Identical duplicates (also with
// other at/latency_s/video) are dropped and counted; a record that differs is a conflict naming both
// sources and the field; another grid, shards of another N and an --out that holds a RUN are refused;
// a partial set of shards merges, says so, and is no RUN a plain sweep resumes; the merge writes to an
// object store as well.
func TestMerge(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	rt, sp := tinyRuntime(t)
	dir := t.TempDir()
	full := testOptions(t, filepath.Join(dir, "full"), rt, sp, testGrid)
	if _, err := sweep.Run(ctx, nil, full); err != nil {
		t.Fatal(err)
	}
	want := readRun(t, full.Out)
	shards := []string{filepath.Join(dir, "s0"), srv.URL("shards/s1"), filepath.Join(dir, "s2")}
	for i, out := range shards {
		o := testOptions(t, out, rt, sp, testGrid)
		o.Shard = sweep.Shard{I: i, N: 3}
		if _, err := sweep.Run(ctx, nil, o); err != nil {
			t.Fatal(err)
		}
	}
	s0, _ := readAny(t, shards[0])
	if len(s0) == 0 || len(s0) == len(want) {
		t.Fatalf("shard 0 holds %d of %d pairs: the test wants a shard that is neither empty nor everything", len(s0), len(want))
	}

	merged := filepath.Join(dir, "merged")
	sum, err := runs.Merge(ctx, runs.MergeOptions{Runs: shards, Out: merged, Command: []string{"framesweep", "merge"}})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Complete || sum.Shards != "" || sum.Pairs != len(want) || sum.Duplicates != 0 || sum.PairsMissing == nil || *sum.PairsMissing != 0 {
		t.Fatalf("merge: %+v", sum)
	}
	sameAnswers(t, readRun(t, merged), want)
	recs, err := record.ReadPaths([]string{merged})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audit.Analyze(recs, audit.DefaultOptions()); err != nil {
		t.Fatalf("audit of the merged RUN: %v", err)
	}
	var ri runs.Info
	b := mustRead(t, filepath.Join(merged, "run.json"))
	if err := json.Unmarshal(b, &ri); err != nil || ri.Shard != "" || len(ri.Merged) != 3 || len(ri.Sessions) != 4 || ri.Sessions[1].Run != shards[1] {
		t.Fatalf("merged run.json: %s", b)
	}
	res := testOptions(t, merged, rt, sp, testGrid)
	res.Resume = true
	if again, err := sweep.Run(ctx, nil, res); err != nil || again.PairsDone != 0 || again.PairsRecorded != len(want) {
		t.Fatalf("resume of the merged RUN: %+v %v", again, err)
	}
	if _, err := runs.Merge(ctx, runs.MergeOptions{Runs: shards, Out: merged}); err == nil || !strings.Contains(err.Error(), "already holds a RUN") {
		t.Fatalf("merge into a RUN: %v", err)
	}

	// Duplicates: shard 0 twice, the copy written at other times by other paths.
	dup := filepath.Join(dir, "s0-again")
	copyRun(t, shards[0], dup)
	rewriteLines(t, filepath.Join(dup, "records.jsonl"), func(_ int, m map[string]any) {
		m["at"], m["latency_s"], m["video"] = "2031-01-01T00:00:00Z", 99.0, "/elsewhere/"+filepath.Base(m["video"].(string))
	})
	sum, err = runs.Merge(ctx, runs.MergeOptions{Runs: append([]string{dup}, shards...), Out: filepath.Join(dir, "m-dup")})
	if err != nil || sum.Duplicates != len(s0) || sum.Pairs != len(want) || sum.Runs[1].Duplicates != len(s0) || sum.Runs[1].Records != 0 {
		t.Fatalf("duplicates: %+v %v", sum, err)
	}

	// A conflict: the copy's third record answers otherwise.
	conf := filepath.Join(dir, "s0-conflict")
	copyRun(t, shards[0], conf)
	rewriteLines(t, filepath.Join(conf, "records.jsonl"), func(i int, m map[string]any) {
		if i == 2 {
			m["prediction"] = "Z"
		}
	})
	_, err = runs.Merge(ctx, runs.MergeOptions{Runs: append(shards, conf), Out: filepath.Join(dir, "m-conflict")})
	if !errors.Is(err, runs.ErrConflict) || !strings.Contains(err.Error(), filepath.Join(shards[0], "records.jsonl")+":3") ||
		!strings.Contains(err.Error(), filepath.Join(conf, "records.jsonl")+":3") || !strings.Contains(err.Error(), "in prediction") {
		t.Fatalf("conflict: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "m-conflict", "run.json")); err == nil {
		t.Fatal("a failed merge left a run.json")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "m-conflict", "*")); len(left) > 1 { // .lock only
		t.Fatalf("a failed merge left %v", left)
	}

	// Refusals: another grid; shards of another N.
	other := testOptions(t, filepath.Join(dir, "other"), rt, sp, filepath.Join("..", "examples", "demo-grid.yaml"))
	other.Limit = 1
	if _, err := sweep.Run(ctx, nil, other); err != nil {
		t.Fatal(err)
	}
	if _, err := runs.Merge(ctx, runs.MergeOptions{Runs: []string{shards[0], other.Out}, Out: filepath.Join(dir, "m-other")}); !errors.Is(err, runs.ErrMismatch) || !strings.Contains(err.Error(), "grid") {
		t.Fatalf("another grid: %v", err)
	}
	half := testOptions(t, filepath.Join(dir, "half"), rt, sp, testGrid)
	half.Shard, half.Limit = sweep.Shard{I: 0, N: 2}, 1
	if _, err := sweep.Run(ctx, nil, half); err != nil {
		t.Fatal(err)
	}
	if _, err := runs.Merge(ctx, runs.MergeOptions{Runs: []string{shards[0], half.Out}, Out: filepath.Join(dir, "m-n")}); err == nil || !strings.Contains(err.Error(), "different N") {
		t.Fatalf("shards of another N: %v", err)
	}

	// Part of the shards, onto an object store: says so, and a plain sweep does not resume it.
	part := srv.URL("merged/part")
	sum, err = runs.Merge(ctx, runs.MergeOptions{Runs: shards[:2], Out: part, ChunkRecords: 10})
	if err != nil || sum.Complete || sum.Shards != "0,1/3" || sum.PairsMissing != nil || len(sum.Warnings) == 0 {
		t.Fatalf("partial merge: %+v %v", sum, err)
	}
	got, srcs := readAny(t, part)
	s1, _ := readAny(t, shards[1])
	if len(got) != len(s0)+len(s1) || len(srcs) != (len(got)+9)/10 {
		t.Fatalf("partial merge: %d records in %d chunks", len(got), len(srcs))
	}
	pr := testOptions(t, part, rt, sp, testGrid)
	pr.Resume = true
	if _, err := sweep.Run(ctx, nil, pr); !errors.Is(err, runs.ErrMismatch) || !strings.Contains(err.Error(), "shard") {
		t.Fatalf("resume of a partial merge without its shards: %v", err)
	}
}

// TestMergeTornTail: an input killed mid-write (its records.jsonl ends with half a line) merges
// without that line, counted in torn_bytes.
func TestMergeTornTail(t *testing.T) {
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	dir := t.TempDir()
	o := testOptions(t, filepath.Join(dir, "run"), rt, sp, testGrid)
	o.Limit = 1
	if _, err := sweep.Run(ctx, nil, o); err != nil {
		t.Fatal(err)
	}
	recs := readRun(t, o.Out)
	f, err := os.OpenFile(filepath.Join(o.Out, "records.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"item_id":"x","con`); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	sum, err := runs.Merge(ctx, runs.MergeOptions{Runs: []string{o.Out}, Out: filepath.Join(dir, "m")})
	if err != nil || sum.Pairs != len(recs) || sum.Runs[0].TornBytes != int64(len(`{"item_id":"x","con`)) {
		t.Fatalf("%+v %v", sum, err)
	}
	if _, err := runs.Merge(ctx, runs.MergeOptions{Out: filepath.Join(dir, "m2")}); err == nil {
		t.Fatal("a merge of nothing")
	}
}
