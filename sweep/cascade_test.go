package sweep

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/cascade"
	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/runs"
)

// cascadeGrid is a nested ladder (each budget's frames contain the smaller ones').
const cascadeGrid = "frames: [2, 4, 8]\npolicies: [nested]\nresolutions: [\"64x48\"]\n"

func writeGrid(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "grid.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCascadeOnlineMatchesOffline: the offline cascade replayed on a full sweep of the same items
// predicts the online run at the same threshold: every item stops at the same budget, with the same
// inputs and answers. Frames decoded per video never exceed the union of the ladder (the top budget:
// nested), each decoded once, and the frames held for later steps never exceed the top budget's.
func TestCascadeOnlineMatchesOffline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	grid := writeGrid(t, cascadeGrid)
	full := testOptions(t, filepath.Join(t.TempDir(), "full"), rt, sp, grid)
	full.Limit = 9 // the three videos with ≥ 8 frames
	if _, err := Run(ctx, nil, full); err != nil {
		t.Fatal(err)
	}
	fullRecs, err := record.ReadPaths([]string{full.Out})
	if err != nil {
		t.Fatal(err)
	}
	// A threshold between the first budget's confidences, so some items stop and some escalate.
	var confs []float64
	for _, r := range fullRecs {
		if r.Config == "f2-nested-64x48-raw" {
			confs = append(confs, *r.Confidence)
		}
	}
	sort.Float64s(confs)
	tau := (confs[len(confs)/2-1] + confs[len(confs)/2]) / 2
	ladder := []string{"f2-nested-64x48-raw", "f4-nested-64x48-raw", "f8-nested-64x48-raw"}
	stops, err := cascade.Stops(fullRecs, ladder, tau)
	if err != nil {
		t.Fatal(err)
	}

	on := testOptions(t, filepath.Join(t.TempDir(), "online"), rt, sp, grid)
	on.Limit = 9
	on.Cascade = &runs.Cascade{Budgets: []int{2, 4, 8}, Threshold: tau}
	sum, err := Run(ctx, nil, on)
	if err != nil {
		t.Fatal(err)
	}
	fullByPair := readRun(t, full.Out)
	escalated, stopped := 0, 0
	for k, r := range readRun(t, on.Out) {
		if r.Cascade == nil {
			t.Fatalf("%v: no cascade step", k)
		}
		if fr := fullByPair[k]; fr.InputSHA256 != r.InputSHA256 || fr.Prediction != r.Prediction || *fr.Confidence != *r.Confidence {
			t.Fatalf("%v: online input/answer differ from the full sweep's", k)
		}
		if !r.Cascade.Final {
			escalated++
			continue
		}
		stopped++
		if stops[k.Item] != k.Config {
			t.Errorf("%s stopped online at %s, the offline replay at %s", k.Item, k.Config, stops[k.Item])
		}
	}
	if stopped != 9 || escalated == 0 || sum.Cascade.Final != 9 || len(sum.Cascade.StoppedAt) < 2 {
		t.Fatalf("%d final, %d escalations, %+v", stopped, escalated, sum.Cascade)
	}
	for _, v := range sum.PerVideo {
		if v.FramesDecoded > 8 || v.FramesHeld > 8 || v.FramesDecoded != v.FramesUnion {
			t.Errorf("%s: decoded %d, union %d, held %d (top budget 8, nested)", v.Video, v.FramesDecoded, v.FramesUnion, v.FramesHeld)
		}
	}
	// The audit reads the online RUN: the summary, and the first budget as a fixed budget.
	onRecs, err := record.ReadPaths([]string{on.Out})
	if err != nil {
		t.Fatal(err)
	}
	res, err := audit.Analyze(onRecs, audit.DefaultOptions())
	if err != nil || res.OnlineCascade == nil || res.OnlineCascade.Items != 9 || len(res.Configs) != 1 {
		t.Fatalf("audit of the online run: %+v %v", res, err)
	}
}

// TestCascadeResume: a stopped online cascade resumes where each item stands and ends as an
// uninterrupted one.
func TestCascadeResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	grid := writeGrid(t, cascadeGrid)
	clean := testOptions(t, filepath.Join(t.TempDir(), "clean"), rt, sp, grid)
	clean.Limit, clean.Cascade = 9, &runs.Cascade{Budgets: []int{2, 4, 8}, Threshold: 0.535}
	if _, err := Run(ctx, nil, clean); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, filepath.Join(t.TempDir(), "run"), rt, sp, grid)
	o.Limit, o.Cascade, o.Jobs = 9, &runs.Cascade{Budgets: []int{2, 4, 8}, Threshold: 0.535}, 1
	stop := make(chan struct{})
	var once sync.Once
	n := 0
	o.Progress = progressFunc(func(*record.Full) {
		if n++; n == 2 {
			once.Do(func() { close(stop) })
		}
	})
	if _, err := Run(ctx, stop, o); err == nil {
		t.Fatal("the stopped run reports no interruption")
	}
	o.Progress, o.Resume = nil, true
	if _, err := Run(ctx, nil, o); err != nil {
		t.Fatal(err)
	}
	a, b := readRun(t, clean.Out), readRun(t, o.Out)
	if len(a) != len(b) {
		t.Fatalf("%d records after resume, %d uninterrupted", len(b), len(a))
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || x.Cascade.Final != y.Cascade.Final || x.Prediction != y.Prediction {
			t.Fatalf("%v: %+v vs %+v", k, x.Cascade, y.Cascade)
		}
	}
	// Another threshold is another sweep.
	o.Cascade = &runs.Cascade{Budgets: []int{2, 4, 8}, Threshold: 0.9}
	if _, err := Run(ctx, nil, o); err == nil || !strings.Contains(err.Error(), "cascade") {
		t.Fatalf("another threshold: %v", err)
	}
}

// TestCascadeGridRefusals: the grid must be exactly one chain at the cascade's budgets.
func TestCascadeGridRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	for grid, want := range map[string]string{
		cascadeGrid + "text_only: true\n":                                     "not a frame budget",
		"frames: [2, 4]\npolicies: [nested, uniform]\n":                       "more than one chain",
		"frames: [2, 8]\npolicies: [nested]\n":                                "budget 4",
		"frames: [2, 4, 8, 16]\npolicies: [nested]\nresolutions: [\"8x8\"]\n": "exactly the cascade's budgets",
	} {
		o := testOptions(t, filepath.Join(t.TempDir(), "run"), rt, sp, writeGrid(t, grid))
		o.Cascade = &runs.Cascade{Budgets: []int{2, 4, 8}, Threshold: 0.5}
		if _, err := Run(ctx, nil, o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v (want %q)", grid, err, want)
		}
	}
}

// TestCascadeWithCache: an online cascade with --cache writes each step's input to the store as it
// builds it; a second cascade on the store decodes nothing and asks the same items the same inputs.
func TestCascadeWithCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt, sp := tinyRuntime(t)
	grid := writeGrid(t, cascadeGrid)
	store, err := cache.Open(ctx, filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	var sums []*Summary
	var recs []map[record.Pair]record.Full
	for _, name := range []string{"first", "second"} {
		o := testOptions(t, filepath.Join(t.TempDir(), name), rt, sp, grid)
		o.Limit, o.Cache, o.Cascade = 9, store, &runs.Cascade{Budgets: []int{2, 4, 8}, Threshold: 0.535}
		sum, err := Run(ctx, nil, o)
		if err != nil {
			t.Fatal(err)
		}
		sums, recs = append(sums, sum), append(recs, readRun(t, o.Out))
	}
	if sums[0].InputsBuilt == 0 || sums[0].FramesDecoded == 0 || sums[1].FramesDecoded != 0 || sums[1].InputsBuilt != 0 || sums[1].InputsCached != sums[0].InputsBuilt {
		t.Fatalf("first %+v, second %+v", sums[0], sums[1])
	}
	if len(recs[0]) != len(recs[1]) {
		t.Fatalf("%d records, then %d", len(recs[0]), len(recs[1]))
	}
	for k, a := range recs[0] {
		if b := recs[1][k]; b.InputSHA256 != a.InputSHA256 || b.Cascade == nil || b.Cascade.Final != a.Cascade.Final || b.Prediction != a.Prediction {
			t.Fatalf("%v: %+v vs %+v", k, a, b)
		}
	}
}
