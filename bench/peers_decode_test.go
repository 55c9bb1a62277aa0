package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/sampler"
)

// lmmsUnion is the union of lmms-eval's read_video_pyav indices (np.linspace(0, n-1, k, dtype=int))
// for the peers grid's budgets, ascending.
func lmmsUnion(n int, budgets ...int) []int {
	seen := map[int]bool{}
	var out []int
	for _, k := range budgets {
		for _, x := range sampler.NumpyLinspace(0, float64(n-1), k) {
			if i := int(x); !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	return out
}

// BenchmarkPeersDecode is decode's share of `bench peers`: Read of the lmms-eval {8,16,32,64} union on
// the 60 s 1080p and 600 s 720p H.264 clips (generated into CacheDir() when missing: minutes), by plan:
// one decoder with one thread, one decoder with a thread per core, and the default plan (segments on
// several decoders when the cost model says so), and Open alone. It reports the CPU time per read beside the wall
// time, the packets sent against the reference-chain floor, and the plan. For profiles:
//
//	go test -run '^$' -bench BenchmarkPeersDecode -benchtime 3x -cpuprofile cpu.out ./bench/
func BenchmarkPeersDecode(b *testing.B) {
	for _, c := range []Clip{BenchClip(250), LongBenchClip()} {
		b.Run(fmt.Sprintf("clip=%dp-%ds", c.Height, c.Seconds), func(b *testing.B) {
			path, err := EnsureClip(context.Background(), CacheDir(), c)
			if err != nil {
				b.Fatal(err)
			}
			b.Run("open", func(b *testing.B) { // the demux scan: every packet's timestamps, flags, NAL headers
				for b.Loop() {
					v, err := decode.Open(path, decode.Options{})
					if err != nil {
						b.Fatal(err)
					}
					v.Close()
				}
			})
			for _, plan := range []struct {
				name string
				opts decode.Options
			}{
				{"threads=1", decode.Options{Threads: 1}},
				{fmt.Sprintf("threads=%d", runtime.NumCPU()), decode.Options{Threads: runtime.NumCPU()}},
				{"plan=default", decode.Options{}},
			} {
				b.Run(plan.name, func(b *testing.B) { benchRead(b, path, plan.opts) })
			}
		})
	}
}

func benchRead(b *testing.B, path string, opts decode.Options) {
	v, err := decode.Open(path, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	union := lmmsUnion(v.NumFrames(), 8, 16, 32, 64)
	var st decode.Stats
	cpu0 := cpuSeconds()
	for b.Loop() {
		if st, err = v.Read(union, func(*decode.Frame) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(st.PacketsSent), "packets/op")
	b.ReportMetric(float64(st.MinPackets), "floor/op")
	b.ReportMetric(float64(st.Decoders), "decoders")
	b.ReportMetric(float64(st.Segments), "segments")
	if os.Getenv("FRAMESWEEP_BENCH_VERBOSE") != "" {
		b.Logf("%+v", st)
	}
}
