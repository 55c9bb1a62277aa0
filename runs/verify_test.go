//go:build cgo

// These tests sweep through llama.cpp (cgo): a CGO_ENABLED=0 build of the package, such as
// scripts/fuzz.sh makes for FuzzScanRecords, leaves them out.

package runs_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/bucket"
	"github.com/framesweep/framesweep/internal/testsupport/s3test"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/runs"
	"github.com/framesweep/framesweep/sweep"
)

// rawObjects reads every object of a bucket RUN as the store holds it (no runs reader in between).
func rawObjects(t testing.TB, url string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	b, _, err := bucket.OpenBucket(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	out := map[string][]byte{}
	it := b.List(nil)
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if out[o.Key], err = b.ReadAll(ctx, o.Key); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestChunkDigests: every chunk a sweep publishes on an object store carries its sha256 and line count
// in its name and in run.json's manifest (checked against the bytes the store holds). A store that
// flips one byte of a chunk once is read again and merged; one that flips it every time is refused by
// merge, resume and the audit's reader, naming the object, the expected and the received digest, and
// the merge leaves nothing. A copy in a directory is checked the same; a chunk the manifest lists and
// the store lost is an error; chunks of an older RUN (no digests) are read with a note.
func TestChunkDigests(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	rt, sp := tinyRuntime(t)
	dir := t.TempDir()
	loc := srv.URL("runs/a")
	o := testOptions(t, loc, rt, sp, testGrid)
	o.Limit, o.ChunkRecords = 2, 5
	if _, err := sweep.Run(ctx, nil, o); err != nil {
		t.Fatal(err)
	}
	objs := rawObjects(t, loc)
	var ri runs.Info
	if err := json.Unmarshal(objs["run.json"], &ri); err != nil || len(ri.Sessions) != 1 {
		t.Fatalf("run.json: %s %v", objs["run.json"], err)
	}
	man := ri.Sessions[0].Chunks
	if len(man) < 3 {
		t.Fatalf("the manifest lists %d chunks: the test wants several", len(man))
	}
	for _, c := range man {
		b, ok := objs[c.Name]
		if !ok || c.SHA256 != hexSum(b) || c.Lines != strings.Count(string(b), "\n") ||
			!strings.HasSuffix(c.Name, "."+c.SHA256+".jsonl") || !strings.Contains(c.Name, "."+itoa(c.Lines)+".") {
			t.Fatalf("manifest entry %+v: object %v, %d bytes", c, ok, len(b))
		}
	}
	victim := man[1]
	key := "runs/a/" + victim.Name

	// Flipped once: read again, merged whole.
	srv.Corrupt(key, 1)
	sum, err := runs.Merge(ctx, runs.MergeOptions{Runs: []string{loc}, Out: filepath.Join(dir, "m-once")})
	if err != nil || len(sum.Notes) != 0 {
		t.Fatalf("a chunk flipped once: %+v %v", sum, err)
	}
	corrupted := 0
	for _, r := range srv.Requests() {
		if r.Corrupted {
			corrupted++
		}
	}
	if corrupted != 1 {
		t.Fatalf("%d corrupted replies, want 1: the test did not flip the chunk", corrupted)
	}

	// Flipped every time: refused by name with both digests; the merge leaves nothing.
	srv.Corrupt(key, -1)
	flipped := append([]byte(nil), objs[victim.Name]...)
	flipped[len(flipped)/2] ^= 0x01
	wantMsg := []string{"framesweep-test/runs/a/" + victim.Name, "expected sha256 " + victim.SHA256, "received sha256 " + hexSum(flipped)}
	refused := func(what string, err error) {
		t.Helper()
		t.Logf("%s: %v", what, err)
		var ce *runs.ChunkError
		if !errors.Is(err, runs.ErrChunkDigest) || !errors.As(err, &ce) {
			t.Fatalf("%s of a store that flips a byte: %v", what, err)
		}
		for _, w := range wantMsg {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("%s: %q does not say %q", what, err, w)
			}
		}
	}
	bad := filepath.Join(dir, "m-bad")
	_, err = runs.Merge(ctx, runs.MergeOptions{Runs: []string{loc}, Out: bad})
	refused("merge", err)
	if left, _ := filepath.Glob(filepath.Join(bad, "*")); len(left) > 1 { // .lock only
		t.Fatalf("a refused merge left %v", left)
	}
	_, err = runs.Merge(ctx, runs.MergeOptions{Runs: []string{loc}, Out: srv.URL("runs/m-bad"), ChunkRecords: 3})
	refused("merge onto the store", err)
	if left := rawObjects(t, srv.URL("runs/m-bad")); left["run.json"] != nil {
		t.Fatal("a refused merge published run.json")
	}
	_, err = runs.ReadAll(ctx, []string{loc})
	refused("the audit's reader", err)
	res := o
	res.Resume = true
	_, err = sweep.Run(ctx, nil, res)
	refused("--resume", err)
	srv.Corrupt(key, 0)

	// A copy in a directory: checked the same, by file.
	cp := filepath.Join(dir, "copy")
	mustMkdir(t, filepath.Join(cp, "records"))
	for name, b := range objs {
		if name != "lock.json" {
			testenv.WriteFile(t, filepath.Join(cp, filepath.FromSlash(name)), b)
		}
	}
	if _, err := runs.Merge(ctx, runs.MergeOptions{Runs: []string{cp}, Out: filepath.Join(dir, "m-copy")}); err != nil {
		t.Fatalf("merge of the copy: %v", err)
	}
	testenv.WriteFile(t, filepath.Join(cp, filepath.FromSlash(victim.Name)), flipped)
	wantMsg[0] = filepath.Join(cp, filepath.FromSlash(victim.Name))
	_, err = runs.ReadAll(ctx, []string{cp})
	refused("the audit's reader of the copy", err)

	// Lost: the manifest lists a chunk the copy lacks.
	os.Remove(filepath.Join(cp, filepath.FromSlash(victim.Name)))
	if _, err := runs.ReadAll(ctx, []string{cp}); !errors.Is(err, runs.ErrChunkDigest) || !strings.Contains(err.Error(), "does not hold it") || !strings.Contains(err.Error(), victim.SHA256) {
		t.Fatalf("a lost chunk: %v", err)
	}

	// An older RUN: chunks named without digests, none in run.json: read as before, with a note.
	old := filepath.Join(dir, "old")
	mustMkdir(t, filepath.Join(old, "records"))
	for i, c := range man {
		testenv.WriteFile(t, filepath.Join(old, "records", "0000-00000"+itoa(i)+".jsonl"), objs[c.Name])
	}
	ri.Sessions[0].Chunks = nil
	b, _ := json.Marshal(ri)
	testenv.WriteFile(t, filepath.Join(old, "run.json"), b)
	sum, err = runs.Merge(ctx, runs.MergeOptions{Runs: []string{old}, Out: filepath.Join(dir, "m-old")})
	if err != nil || len(sum.Notes) != 1 || !strings.Contains(sum.Notes[0], "read unverified") {
		t.Fatalf("an older RUN: %+v %v", sum, err)
	}
	if n := runs.Notes(ctx, []string{old, loc}); len(n) != 1 || !strings.Contains(n[0], itoa(len(man))+" of "+itoa(len(man))) {
		t.Fatalf("notes: %q", n)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
