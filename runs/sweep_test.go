//go:build cgo

// These tests sweep through llama.cpp (cgo): a CGO_ENABLED=0 build of the package, such as
// scripts/fuzz.sh makes for FuzzScanRecords, leaves them out.

package runs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/llamacpp"
	"github.com/framesweep/framesweep/llm/testmodel"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
	"github.com/framesweep/framesweep/sweep"
)

// The merge tests join real sweeps' RUNs: the tiny random-weight llama.cpp model answers
// examples/items.jsonl under examples/sweep-grid.yaml (the package runs itself is pure Go; its tests
// use the producer).

const (
	testItems = "../examples/items.jsonl"
	testGrid  = "../examples/sweep-grid.yaml"
)

func tinyRuntime(t testing.TB) (llm.Runtime, llm.Spec) {
	t.Helper()
	tm, err := testmodel.Write(t.TempDir(), testmodel.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := llm.ParseSpec("llamacpp:model=" + tm.Model + ",mmproj=" + tm.Mmproj + ",threads=1")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := llamacpp.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, sp
}

func testOptions(t testing.TB, out string, rt llm.Runtime, sp llm.Spec, gridPath string) sweep.Options {
	t.Helper()
	g, err := grid.Load(gridPath)
	if err != nil {
		t.Fatal(err)
	}
	its, err := items.Read(testItems)
	if err != nil {
		t.Fatal(err)
	}
	return sweep.Options{Grid: g, GridPath: gridPath, Items: its, Runtime: rt, Spec: sp, Out: out, Jobs: 2,
		Libraries: pipeline.Libraries()}
}

// readRun reads RUN/records.jsonl: every line must be a whole record, one per pair.
func readRun(t testing.TB, dir string) map[record.Pair]record.Full {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readLines(t, f, map[record.Pair]record.Full{}, dir)
}

func readLines(t testing.TB, f interface{ Read([]byte) (int, error) }, out map[record.Pair]record.Full, where string) map[record.Pair]record.Full {
	t.Helper()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r record.Full
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: torn or bad line %q: %v", where, sc.Text(), err)
		}
		if _, dup := out[r.Key()]; dup {
			t.Fatalf("%s: two records of %v", where, r.Key())
		}
		out[r.Key()] = r
	}
	return out
}

// readAny reads every record of a RUN through a Reader (a directory or a bucket): whole lines only,
// one record per pair; and the RUN's sources.
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
		readLines(t, rc, out, s)
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

func sameProbs(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// mustMkdir makes a test directory (and its parents).
func mustMkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// mustRead reads a test file.
func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
