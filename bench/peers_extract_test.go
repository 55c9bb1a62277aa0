package bench

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/pipeline"
)

// BenchmarkPeersExtract is framesweep's side of `bench peers` on the long clip, in process: the same
// extract.Run that `framesweep extract --grid bench/peers/grid.yaml --pipeline raw --kernel
// pil-bicubic --no-autorotate` runs (hashing the video, the index scan, decoding, conversion, resize,
// writing and fsyncing the objects), into a fresh store per iteration; what the process adds on top is
// loading the binary (`framesweep version`). For the profile in docs/bench.md:
//
//	go test -run '^$' -bench BenchmarkPeersExtract -benchtime 2x -cpuprofile cpu.out ./bench/
//	go tool pprof -top bench.test cpu.out
//
// The 600 s 720p clip is generated into CacheDir() when missing (10–25 minutes on 2 cores).
func BenchmarkPeersExtract(b *testing.B) {
	path, err := EnsureClip(context.Background(), CacheDir(), LongBenchClip())
	if err != nil {
		b.Fatal(err)
	}
	grid, err := grid.Load("peers/grid.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var cpu0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu0)
	var decoded, codec int
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "cache")
		store, err := cache.Open(context.Background(), dir)
		if err != nil {
			b.Fatal(err)
		}
		o := extract.Options{Jobs: 1, Grid: grid, Store: store, Options: pipeline.Options{
			Pipelines: []string{cache.PipelineRaw}, Kernel: "pil-bicubic", NoAutorotate: true}}
		b.StartTimer()
		sum, err := extract.Run(context.Background(), o, []string{path})
		b.StopTimer()
		if err != nil || sum.VideosFailed > 0 || sum.PairsFailed > 0 {
			b.Fatalf("extract: %v %+v", err, sum)
		}
		decoded, codec = sum.FramesDecoded, sum.CodecFrames
		_ = store.Close()
		_ = os.RemoveAll(dir)
		b.StartTimer()
	}
	var cpu1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu1)
	b.ReportMetric(float64(decoded), "frames/op")
	b.ReportMetric(float64(codec), "codec-frames/op")
	b.ReportMetric((rusageSeconds(cpu1)-rusageSeconds(cpu0))/float64(b.N), "cpu-s/op")
}

func rusageSeconds(ru syscall.Rusage) float64 {
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
