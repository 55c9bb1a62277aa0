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
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/framesweep/framesweep/internal/bucket"
	"github.com/framesweep/framesweep/internal/testsupport/s3test"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

// readAny reads every record of a RUN through RunReader (a directory or a bucket): whole lines
// only, one record per pair.
func readAny(t testing.TB, loc string) (map[record.Pair]record.Full, []string) {
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
	out := map[record.Pair]record.Full{}
	for _, s := range srcs {
		rc, err := rr.OpenSource(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(rc)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r record.Full
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: bad line %q: %v", s, sc.Text(), err)
			}
			k := record.Pair{Item: r.ItemID, Config: r.Config}
			if _, dup := out[k]; dup {
				t.Fatalf("%s: a second record of %v", s, k)
			}
			out[k] = r
		}
		rc.Close()
	}
	return out, srcs
}

func sameAnswers(t testing.TB, got, want map[record.Pair]record.Full) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || g.Status != w.Status || g.Prediction != w.Prediction || g.Response != w.Response || g.InputSHA256 != w.InputSHA256 || !sameProbs(g.Probs, w.Probs) {
			t.Fatalf("%v: %+v, want %+v", k, g, w)
		}
	}
}

func openBucket(t testing.TB, url string) *blob.Bucket {
	t.Helper()
	b, _, err := bucket.OpenBucket(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestSweepObjectStore: a sweep whose RUN is an S3 prefix (the real S3 client over HTTP to gofakes3 on
// 127.0.0.1). Records are immutable chunk objects of at most ChunkRecords lines; a session stopped
// halfway and resumed ends with one record per pair and the answers of a local run; the lock object
// is removed after each session; another grid is refused; a second sweep on the RUN is refused while the first holds it.
func TestSweepObjectStore(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	rt, sp := tinyRuntime(t)
	local := testOptions(t, filepath.Join(t.TempDir(), "local"), rt, sp, testGrid)
	local.Limit = 5
	if _, err := Run(ctx, nil, local); err != nil {
		t.Fatal(err)
	}
	want := readRun(t, local.Out)

	url := srv.URL("runs/one")
	o := testOptions(t, url, rt, sp, testGrid)
	o.Limit, o.ChunkRecords, o.ChunkInterval = 5, 7, time.Hour
	stop := make(chan struct{})
	var once sync.Once
	var n atomic.Int32
	o.Progress = progressFunc(func(*record.Full) { // called from the answer workers
		if n.Add(1) == 17 {
			once.Do(func() { close(stop) })
		}
	})
	sum, err := Run(ctx, stop, o)
	if !errors.Is(err, ErrInterrupted) || sum.PairsRemaining == 0 || !strings.HasSuffix(sum.Records, "/runs/one/records/") {
		t.Fatalf("stopped session: %+v %v", sum, err)
	}
	first, srcs := readAny(t, url)
	if len(first) != sum.PairsDone+sum.PairsFailed {
		t.Fatalf("%d records after the stop, the session wrote %d", len(first), sum.PairsDone+sum.PairsFailed)
	}
	for _, s := range srcs[:len(srcs)-1] {
		if !strings.HasPrefix(s, "records/0000-") {
			t.Fatalf("chunk %s", s)
		}
	}
	o.Progress, o.Resume = nil, true
	if _, err := Run(ctx, nil, o); err != nil {
		t.Fatal(err)
	}
	got, srcs := readAny(t, url)
	sameAnswers(t, got, want)
	lines := 0
	for _, s := range srcs {
		b, err := openBucket(t, url).ReadAll(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if c := strings.Count(string(b), "\n"); c > o.ChunkRecords || c == 0 || b[len(b)-1] != '\n' {
			t.Fatalf("chunk %s holds %d lines (at most %d, whole lines only)", s, c, o.ChunkRecords)
		}
		lines += strings.Count(string(b), "\n")
	}
	if lines != len(want) || !strings.HasPrefix(srcs[len(srcs)-1], "records/0001-") {
		t.Fatalf("chunks %v hold %d lines", srcs, lines)
	}
	// The lock object is gone after each session; run.json has both sessions.
	if ok, _ := openBucket(t, url).Exists(ctx, "lock.json"); ok {
		t.Fatal("lock.json left behind")
	}
	rr, err := runs.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if ri, err := rr.Info(ctx); err != nil || len(ri.Sessions) != 2 || !ri.Sessions[1].Resumed {
		t.Fatalf("run.json: %+v %v", ri, err)
	}
	rr.Close()

	// Resume: nothing left to do; another grid is refused.
	again, err := Run(ctx, nil, o)
	if err != nil || again.PairsDone != 0 || again.PairsRecorded != len(want) {
		t.Fatalf("resume: %+v %v", again, err)
	}
	other := testOptions(t, url, rt, sp, filepath.Join("..", "examples", "demo-grid.yaml"))
	other.Resume = true
	if _, err := Run(ctx, nil, other); !errors.Is(err, runs.ErrMismatch) {
		t.Fatalf("another grid: %v", err)
	}
	// A RUN whose lease a live process of this host holds (a sleeping child) is refused.
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	host, _ := os.Hostname()
	writeLease(t, url, host, child.Process.Pid, time.Now())
	if _, err := Run(ctx, nil, o); err == nil || !strings.Contains(err.Error(), "another sweep is running") {
		t.Fatalf("a held RUN: %v", err)
	}
}

// writeLease writes the RUN's lease object (runs' lock.json) as the process pid of host holding it
// with a heartbeat at hb.
func writeLease(t testing.TB, url, host string, pid int, hb time.Time) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"host": host, "pid": pid, "token": "x", "heartbeat": hb.UTC().Format(time.RFC3339Nano)})
	if err := openBucket(t, url).WriteAll(context.Background(), "lock.json", b, nil); err != nil {
		t.Fatal(err)
	}
}

// TestRunCopiedBetweenStores: a RUN on an object store copied into a directory (records/ chunks) is
// read, resumed and audited there like any RUN: the resume finds every pair recorded and appends to
// records.jsonl; a chunk that does not end with a newline (no sweep publishes one) is refused by name.
func TestRunCopiedBetweenStores(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	rt, sp := tinyRuntime(t)
	url := srv.URL("runs/copy")
	o := testOptions(t, url, rt, sp, testGrid)
	o.Limit, o.ChunkRecords = 3, 5
	if _, err := Run(ctx, nil, o); err != nil {
		t.Fatal(err)
	}
	want, srcs := readAny(t, url)
	dir := filepath.Join(t.TempDir(), "run")
	mustMkdir(t, filepath.Join(dir, "records"))
	b := openBucket(t, url)
	for _, name := range append(srcs, "run.json") {
		data, err := b.ReadAll(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		testenv.WriteFile(t, filepath.Join(dir, filepath.FromSlash(name)), data)
	}
	got, _ := readAny(t, dir)
	sameAnswers(t, got, want)
	lo := testOptions(t, dir, rt, sp, testGrid)
	lo.Limit, lo.Resume = 3, true
	sum, err := Run(ctx, nil, lo)
	if err != nil || sum.PairsRecorded != len(want) || sum.PairsDone != 0 {
		t.Fatalf("local resume of a copied RUN: %+v %v", sum, err)
	}
	// More items: the new pairs go to records.jsonl beside the chunks.
	lo.Limit = 4
	sum, err = Run(ctx, nil, lo)
	if err != nil || sum.PairsDone == 0 {
		t.Fatalf("resume with more items: %+v %v", sum, err)
	}
	all, srcs2 := readAny(t, dir)
	if len(all) != len(want)+sum.PairsDone || srcs2[0] != "records.jsonl" {
		t.Fatalf("%d records from %v", len(all), srcs2)
	}
	// A chunk without its newline is no chunk a sweep published.
	bad := filepath.Join(dir, "records", "9999-000000.jsonl")
	line, _ := json.Marshal(record.Record{ItemID: "zz", Config: "zz", Status: "ok"})
	testenv.WriteFile(t, bad, line)
	if _, err := Run(ctx, nil, lo); err == nil || !strings.Contains(err.Error(), "9999-000000.jsonl") {
		t.Fatalf("a torn chunk: %v", err)
	}
	os.Remove(bad)
}
