package h26x

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// FuzzH264Refs: any extradata and packets go through the scan's collector and the reference model
// without a panic, and what is left out is always a reference picture inside the segment, never its
// IDR start nor the frame asked for. Seeded (testdata/fuzz/FuzzH264Refs/) with the avcC and the first
// packets of decode's h264_pyramid_veryfast fixture (x264 veryfast, B-pyramid, in MKV): packets 0-3,
// and 0 with 4-6, as decode's demuxer hands them on.
func FuzzH264Refs(f *testing.F) {
	f.Fuzz(func(t *testing.T, extradata, a, b, c, d []byte) {
		col := NewH264Collector(extradata)
		if col == nil {
			return
		}
		packets := [][]byte{a, b, c, d}
		for _, p := range packets {
			whole := Whole(p)
			col.Add(View{Head: p[:min(len(p), HeadBytes)], Size: len(p)}, func() View { return whole })
		}
		refs := col.Result(len(packets))
		if refs == nil {
			return
		}
		need := []bool{false, false, false, true}
		for _, d := range refs.LeaveOut(0, 3, need) {
			if d <= 0 || d >= 3 || !refs.pics[d].ref {
				t.Fatalf("left out packet %d (ref %v) of a segment [0, 3] wanting 3", d, refs.pics[d].ref)
			}
		}
	})
}

// TestH264RefsSeeds: the seeds are what they are said to be: the collector models the veryfast
// fixture's first packets (an IDR picture, then B-pyramid pictures), so the fuzzer starts from inputs
// the reference model covers rather than from ones it refuses at once.
func TestH264RefsSeeds(t *testing.T) {
	for _, name := range []string{"veryfast_packets_0_3", "veryfast_packets_0_4_5_6"} {
		args := readSeed(t, "testdata/fuzz/FuzzH264Refs/"+name)
		col := NewH264Collector(args[0])
		if col == nil {
			t.Fatalf("%s: the avcC is not read", name)
		}
		for _, p := range args[1:] {
			col.Add(Whole(p), func() View { return Whole(p) })
		}
		refs := col.Result(4)
		if refs == nil {
			t.Fatalf("%s: the packets are outside the model", name)
		}
		if !refs.has[0] || !refs.pics[0].idr {
			t.Errorf("%s: packet 0 is not an IDR picture", name)
		}
	}
}

// readSeed reads a corpus file of []byte arguments ("go test fuzz v1", then one []byte("…") a line).
func readSeed(t *testing.T, file string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != "go test fuzz v1" {
		t.Fatalf("%s: not a fuzz corpus file", file)
	}
	var out [][]byte
	for _, l := range lines[1:] {
		q, pre := strings.CutPrefix(l, "[]byte(")
		q, suf := strings.CutSuffix(q, ")")
		if !pre || !suf {
			t.Fatalf("%s: %q is not a []byte", file, l)
		}
		s, err := strconv.Unquote(q)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, []byte(s))
	}
	return out
}
