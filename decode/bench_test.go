package decode

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// BenchmarkOpen measures Open (probe + demux scan of every packet) on the 6-minute, 21766-frame AV1 video.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(testenv.SharedVideos(b), "androidx-media/long_180p_av1.mp4")
	b.ReportAllocs()
	for b.Loop() {
		v, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		v.Close()
	}
	b.ReportMetric(21766, "frames_indexed/op")
}

// BenchmarkRead compares serving n uniform frames in one pass with decoding every frame, on a 325-frame
// H.264 video with a 202-frame GOP (benchstat the sub-benchmarks against frames=all): stream 0 of the
// NASA clip (its default, best stream is 3, 480x270).
func BenchmarkRead(b *testing.B) {
	path := filepath.Join(testenv.SharedVideos(b), "torchcodec/nasa_13013.mp4")
	v, err := Open(path, Options{Stream: StreamAt(0)})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	n := v.NumFrames()
	for _, k := range []int{16, 64, n} {
		name := fmt.Sprint("frames=", k)
		if k == n {
			name = "frames=all"
		}
		idx := make([]int, k)
		for i := range idx {
			idx[i] = i * n / k
		}
		b.Run(name, func(b *testing.B) {
			var st Stats
			for b.Loop() {
				if st, err = v.Read(idx, func(*Frame) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.Decoded), "decoded/op")
			b.ReportMetric(float64(st.Seeks), "seeks/op")
		})
	}
}
