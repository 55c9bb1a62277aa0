package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// BenchmarkCascade compares an online cascade (nested 2 → 4 → 8 frames at 112², threshold chosen on a
// full run of the ladder) with the fixed top budget (8 frames) on the same 9 items of
// examples/items.jsonl, the tiny llama.cpp model in process: wall-clock of each sweep as a process,
// frames decoded, and answers asked.
//
//	go test -run '^$' -bench BenchmarkCascade -benchtime 1x ./cmd/framesweep/
func BenchmarkCascade(b *testing.B) {
	bin := testenv.Binary(b)
	rc, out, errs := askCLI("testmodel", "--out", b.TempDir())
	if rc != 0 {
		b.Fatalf("testmodel: %s", errs)
	}
	var tm struct{ Spec string }
	if err := json.Unmarshal([]byte(out), &tm); err != nil {
		b.Fatal(err)
	}
	spec := tm.Spec + ",threads=1"
	dir := b.TempDir()
	ladder, top := filepath.Join(dir, "ladder.yaml"), filepath.Join(dir, "top.yaml")
	testenv.WriteFile(b, ladder, []byte("frames: [2, 4, 8]\npolicies: [nested]\nresolutions: [\"112x112\"]\n"))
	testenv.WriteFile(b, top, []byte("frames: [8]\npolicies: [nested]\nresolutions: [\"112x112\"]\n"))
	type summary struct {
		PairsDone     int `json:"pairs_done"`
		FramesDecoded int `json:"frames_decoded"`
		Cascade       *struct {
			Threshold          float64 `json:"threshold"`
			MeanFramesDistinct float64 `json:"mean_frames_distinct"`
		} `json:"cascade"`
	}
	sweepRun := func(grid, run string, extra ...string) (float64, summary) {
		args := append([]string{"sweep", "--grid", grid, "--items", "../../examples/items.jsonl", "--runtime", spec, "--out", run, "--limit", "9", "--log-format", "json"}, extra...)
		t0 := time.Now()
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			b.Fatalf("%v: %v", args, err)
		}
		var s summary
		if err := json.Unmarshal(out, &s); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0).Seconds(), s
	}
	full := filepath.Join(dir, "full")
	sweepRun(ladder, full) // where the threshold is chosen (not timed)
	var tc, tt float64
	var sc, st summary
	for b.Loop() {
		run := b.TempDir()
		tt, st = sweepRun(top, filepath.Join(run, "top"))
		tc, sc = sweepRun(ladder, filepath.Join(run, "cascade"), "--cascade", "2,4,8", "--threshold-from", full)
	}
	b.ReportMetric(tc/tt, "cascade/top-wall")
	b.ReportMetric(float64(sc.FramesDecoded)/float64(st.FramesDecoded), "cascade/top-frames-decoded")
	b.ReportMetric(sc.Cascade.MeanFramesDistinct/8, "cascade/top-distinct-frames-per-item")
	b.ReportMetric(float64(sc.PairsDone)/float64(st.PairsDone), "cascade/top-answers")
	b.ReportMetric(sc.Cascade.Threshold, "threshold")
}
