package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/synth"
)

// BenchmarkScale runs `framesweep audit FILE --json` on 10⁶ records (10⁵ items × 10 configs of
// synth.Records, 265 bytes a line) and `framesweep import lmms-eval` of 10⁶ samples (Video-MME
// samples of ~330 bytes) as processes, and reports each one's wall time, peak RSS (the process's
// getrusage maxrss) and RSS per record; with FRAMESWEEP_SCALE=1e7 it runs 10⁷ too (a 2.6 GB and a
// 3.3 GB file, several GB of memory, minutes). The files are written first, outside the timing.
// FRAMESWEEP_BIN names the binary to measure (default: built from this tree). It only runs on purpose
// (docs/audit.md "Memory"):
//
//	go test -run '^$' -bench BenchmarkScale -benchtime 1x ./cmd/framesweep/
//	FRAMESWEEP_SCALE=1e7 go test -run '^$' -bench BenchmarkScale -benchtime 1x -timeout 60m ./cmd/framesweep/
func BenchmarkScale(b *testing.B) {
	bin := testenv.Binary(b)
	sizes := []int{1_000_000}
	if os.Getenv("FRAMESWEEP_SCALE") == "1e7" {
		sizes = append(sizes, 10_000_000)
	}
	for _, n := range sizes {
		name := fmt.Sprintf("records=1e%d", len(fmt.Sprint(n))-1)
		b.Run("audit/"+name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "records.jsonl")
			writeSyntheticRecords(b, path, n/10)
			measure(b, n, bin, "audit", path, "--json")
		})
		b.Run("import/"+name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "x_samples_videomme.jsonl")
			writeSamples(b, path, n)
			measure(b, n, bin, "ingest", "lmms-eval", path, "--config", "f8", "--no-check")
		})
	}
}

// measure runs the command b.N times and reports its wall time and peak RSS, and the benchmark
// process's own peak RSS (bench-RSS-MiB): Linux starts a child's peak RSS at its parent's (Go starts
// children with vfork, and exec keeps the larger of the two), so a figure near bench-RSS-MiB is a
// bound, not a measure.
func measure(b *testing.B, n int, bin string, args ...string) {
	b.ResetTimer()
	var peak int64
	var wall time.Duration
	for b.Loop() {
		cmd := exec.Command(bin, args...)
		cmd.Stderr = os.Stderr
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v", args[:2], err)
		}
		wall += time.Since(t0)
		peak = max(peak, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss*1024)
	}
	b.ReportMetric(wall.Seconds()/float64(b.N), "s/run")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(peak)/float64(n), "RSS-B/record")
	var self syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err == nil {
		b.ReportMetric(float64(self.Maxrss*1024)/(1<<20), "bench-RSS-MiB")
	}
}

// writeSyntheticRecords writes items × 10 records of synth.Records, 10⁴ items at a time: the
// benchmark's own memory stays small, since a child's peak RSS counts it too (measure).
func writeSyntheticRecords(b *testing.B, path string, items int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for start := 0; start < items; start += 10_000 {
		recs := synth.Records(min(10_000, items-start), uint64(7+start))
		for i := range recs {
			recs[i].ItemID = fmt.Sprintf("b%d-%s", start/10_000, recs[i].ItemID)
		}
		if err := record.Write(w, recs); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// writeSamples writes n lmms-eval Video-MME samples (the v0.7 flattened form), a fifth of them wrong.
func writeSamples(b *testing.B, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		pred := "B"
		if i%5 == 0 {
			pred = "C"
		}
		q := fmt.Sprintf("%07d-1", i)
		score := map[bool]string{true: "1.0", false: "0.0"}[pred == "B"]
		fmt.Fprintf(w, `{"doc_id": %d, "doc": {"videoID": "v%d", "question_id": "%s", "duration": "short", "task_type": "Counting Problem"}, "target": "B", "resps": [["%s"]], "filtered_resps": ["%s"], "videomme_perception_score": {"question_id": "%s", "duration": "short", "category": "Knowledge", "sub_category": "Humanity & History", "task_category": "Counting Problem", "pred_answer": "%s", "answer": "B", "score": %s, "videoID": "v%d"}}`+"\n",
			i, i/3, q, pred, pred, q, pred, score, i/3)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
