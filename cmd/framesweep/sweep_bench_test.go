package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/items"
)

// BenchmarkSweep runs `framesweep sweep` of examples/items.jsonl × examples/sweep-grid.yaml (12 items ×
// 9 configs = 108 pairs, the tiny llama.cpp model in process) as a process and reports its wall time
// against the sum of its unavoidable parts, measured in the same iteration: an `extract` of the same
// grid on the same videos (the decoding and resizing) plus the runtime's own time summed over the pairs
// (the summary's runtime_seconds). It also times the way a shell loop over the CLI does it, one
// `framesweep ask` per pair, and reports sweep ÷ that.
//
//	go test -run '^$' -bench BenchmarkSweep -benchtime 1x ./cmd/framesweep/
func BenchmarkSweep(b *testing.B) {
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
	const gridPath, itemsPath = "../../examples/sweep-grid.yaml", "../../examples/items.jsonl"
	its, err := items.Read(itemsPath)
	if err != nil {
		b.Fatal(err)
	}
	g, err := grid.Load(gridPath)
	if err != nil {
		b.Fatal(err)
	}
	var videos []string
	seen := map[string]bool{}
	for _, it := range its.Items {
		if !seen[it.Video] {
			seen[it.Video] = true
			videos = append(videos, it.Video)
		}
	}
	wall := func(args ...string) (time.Duration, []byte) {
		b.Helper()
		t0 := time.Now()
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			b.Fatalf("%v: %v", args, err)
		}
		return time.Since(t0), out
	}
	var sweepS, extractS, runtimeS, askS float64
	for b.Loop() {
		dir := b.TempDir()
		ts, sout := wall(swArgs(spec, filepath.Join(dir, "run"))...)
		var sum struct {
			RuntimeSeconds float64 `json:"runtime_seconds"`
			PairsDone      int     `json:"pairs_done"`
		}
		if err := json.Unmarshal(sout, &sum); err != nil || sum.PairsDone != len(its.Items)*len(g.Configs) {
			b.Fatalf("sweep summary %s: %v", sout, err)
		}
		te, _ := wall(append([]string{"extract", "--grid", gridPath, "--out", filepath.Join(dir, "cache"), "--jobs", "2", "--videos"}, videos...)...)
		// One ask per pair, as a shell loop would.
		t0 := time.Now()
		for _, it := range its.Items {
			for _, c := range g.Configs {
				args := []string{"ask", "--runtime", spec, "--question", it.Question}
				if c.TextOnly {
					args = append(args, "--text-only")
				} else {
					args = append(args, it.Video, "--policy", c.Policy, "--frames", strconv.Itoa(c.Frames), "--size", c.Resolution, "--pipeline", c.Pipeline)
				}
				args = append(append(args, "--options"), it.Options...) // --options takes the rest
				if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
					b.Fatalf("ask %s %s: %v\n%s", it.ItemID, c.ID, err, out)
				}
			}
		}
		sweepS, extractS, runtimeS, askS = ts.Seconds(), te.Seconds(), sum.RuntimeSeconds, time.Since(t0).Seconds()
	}
	b.ReportMetric(sweepS, "sweep-s")
	b.ReportMetric(extractS, "extract-s")
	b.ReportMetric(runtimeS, "runtime-s")
	b.ReportMetric(askS, "ask-per-pair-s")
	b.ReportMetric(sweepS/(extractS+runtimeS), "sweep/(extract+runtime)")
	b.ReportMetric(sweepS/askS, "sweep/ask-loop")
}
