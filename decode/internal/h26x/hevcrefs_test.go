package h26x

import (
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

// FuzzHEVCRefs: any extradata and packets go through the scan's collector and the reference model
// without a panic; a collector fed the packets' first HeadBytes (the whole packet when they do not
// suffice) reads what one fed whole packets reads; and what is left out is always a reference picture
// inside the segment, never its first packet, the frame asked for or a picture decode drops anyway.
// Seeded (testdata/fuzz/FuzzHEVCRefs/) with the hvcC and the first packets of decode's
// hevc_pyramid_ref1 fixture (x265, B-pyramid, one reference), SEI dropped and each NAL unit cut to 48
// bytes: an IDR picture, a P-frame, the reference B-frame, a B-frame beside it.
func FuzzHEVCRefs(f *testing.F) {
	f.Fuzz(func(t *testing.T, extradata, a, b, c, d []byte) {
		heads, wholes := NewHEVCCollector(extradata), NewHEVCCollector(extradata)
		if heads == nil {
			return
		}
		packets := [][]byte{a, b, c, d}
		for _, p := range packets {
			whole := Whole(p)
			heads.Add(View{Head: p[:min(len(p), HeadBytes)], Size: len(p)}, func() View { return whole })
			wholes.Add(whole, func() View { return whole })
		}
		refs := heads.Result(len(packets))
		if w := wholes.Result(len(packets)); (refs == nil) != (w == nil) || (refs != nil && !reflect.DeepEqual(refs, w)) {
			t.Fatalf("the packets' heads read as %+v, the whole packets as %+v", refs, w)
		}
		if refs == nil {
			return
		}
		need := []bool{false, false, false, true}
		for _, d := range refs.LeaveOut(0, 3, need) {
			if d <= 0 || d >= 3 || !refs.has[d] || refs.pics[d].disp {
				t.Fatalf("left out packet %d (picture %v, disposable %v) of a segment [0, 3] wanting 3", d, refs.has[d], refs.pics[d].disp)
			}
		}
	})
}

// TestHEVCRefsSeeds: the seeds are what they are said to be: the collector models the fixture's first
// packets (an IDR picture, then the B-pyramid), and with frame 3 wanted the model leaves out nothing it
// must not.
func TestHEVCRefsSeeds(t *testing.T) {
	for _, name := range []string{"pyramid_ref1_packets_0_3", "pyramid_ref1_packets_0_2_3_4"} {
		args := readSeed(t, "testdata/fuzz/FuzzHEVCRefs/"+name)
		col := NewHEVCCollector(args[0])
		if col == nil {
			t.Fatalf("%s: the hvcC is not read", name)
		}
		for _, p := range args[1:] {
			col.Add(Whole(p), func() View { return Whole(p) })
		}
		refs := col.Result(4)
		if refs == nil {
			t.Fatalf("%s: the packets are outside the model", name)
		}
		if !refs.has[0] || !isIDR(refs.pics[0].typ) {
			t.Errorf("%s: packet 0 is not an IDR picture", name)
		}
		if out := refs.LeaveOut(0, 3, []bool{false, false, false, true}); slices.Contains(out, 0) || slices.Contains(out, 3) {
			t.Errorf("%s: left out %v", name, out)
		}
	}
}

// bitWriter writes the Exp-Golomb syntax of the tests' parameter sets.
type bitWriter struct {
	b    []byte
	bits int
}

func (w *bitWriter) u(n int, v int) {
	for i := n - 1; i >= 0; i-- {
		if w.bits%8 == 0 {
			w.b = append(w.b, 0)
		}
		if v>>i&1 == 1 {
			w.b[len(w.b)-1] |= 0x80 >> (w.bits % 8)
		}
		w.bits++
	}
}

func (w *bitWriter) ue(v int) {
	n := 0
	for (v+1)>>n > 1 {
		n++
	}
	w.u(n, 0)
	w.u(n+1, v+1)
}

func (w *bitWriter) flag(b bool) {
	if b {
		w.u(1, 1)
	} else {
		w.u(1, 0)
	}
}

// specRPS is the derivation of a predicted short-term set as ITU-T H.265 writes it (7-61, 7-62),
// independent of the sort FFmpeg and readShortTermRPS use.
func specRPS(ref hevcRPS, deltaRps int32, used, useDelta []bool) hevcRPS {
	var s0, s1 []int32
	var u0, u1 []bool
	refNeg, refPos := ref.delta[:ref.nNeg], ref.delta[ref.nNeg:]
	n := len(ref.delta)
	for j := len(refPos) - 1; j >= 0; j-- {
		if d := refPos[j] + deltaRps; d < 0 && useDelta[ref.nNeg+j] {
			s0, u0 = append(s0, d), append(u0, used[ref.nNeg+j])
		}
	}
	if deltaRps < 0 && useDelta[n] {
		s0, u0 = append(s0, deltaRps), append(u0, used[n])
	}
	for j := 0; j < ref.nNeg; j++ {
		if d := refNeg[j] + deltaRps; d < 0 && useDelta[j] {
			s0, u0 = append(s0, d), append(u0, used[j])
		}
	}
	for j := ref.nNeg - 1; j >= 0; j-- {
		if d := refNeg[j] + deltaRps; d > 0 && useDelta[j] {
			s1, u1 = append(s1, d), append(u1, used[j])
		}
	}
	if deltaRps > 0 && useDelta[n] {
		s1, u1 = append(s1, deltaRps), append(u1, used[n])
	}
	for j := 0; j < len(refPos); j++ {
		if d := refPos[j] + deltaRps; d > 0 && useDelta[ref.nNeg+j] {
			s1, u1 = append(s1, d), append(u1, used[ref.nNeg+j])
		}
	}
	return hevcRPS{delta: append(s0, s1...), used: append(u0, u1...), nNeg: len(s0)}
}

// TestShortTermRPS: explicit sets read as written; predicted sets (inter_ref_pic_set_prediction_flag,
// which x265 does not write, so no fixture has one) read as the standard derives them, for random
// reference sets, deltas and flags, in the SPS and in a slice header.
func TestShortTermRPS(t *testing.T) {
	var w bitWriter
	w.ue(2)                                              // num_negative_pics
	w.ue(1)                                              // num_positive_pics
	for _, e := range [][2]int{{0, 1}, {1, 0}, {2, 1}} { // deltas -1, -3, +3
		w.ue(e[0])
		w.u(1, e[1])
	}
	got, err := readShortTermRPS(&bitReader{b: w.b}, nil, 0, false)
	want := hevcRPS{delta: []int32{-1, -3, 3}, used: []bool{true, false, true}, nNeg: 2}
	if err != nil || !got.equal(&want) {
		t.Fatalf("explicit set: %+v %v, want %+v", got, err, want)
	}
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 2000; trial++ {
		// A reference set: distinct negative deltas (descending) and positive ones (ascending).
		var ref hevcRPS
		for d, k := int32(0), rng.Intn(5); k > 0; k-- {
			d -= int32(1 + rng.Intn(3))
			ref.delta, ref.used = append(ref.delta, d), append(ref.used, rng.Intn(2) == 0)
			ref.nNeg++
		}
		for d, k := int32(0), rng.Intn(4); k > 0; k-- {
			d += int32(1 + rng.Intn(3))
			ref.delta, ref.used = append(ref.delta, d), append(ref.used, rng.Intn(2) == 0)
		}
		deltaRps := int32(1 + rng.Intn(4))
		if rng.Intn(2) == 0 {
			deltaRps = -deltaRps
		}
		n := len(ref.delta)
		used, useDelta := make([]bool, n+1), make([]bool, n+1)
		for j := range used {
			used[j] = rng.Intn(2) == 0
			useDelta[j] = used[j] || rng.Intn(2) == 0
			if d := deltaRps; j < n {
				d += ref.delta[j]
				if d == 0 {
					used[j], useDelta[j] = false, false // dPoc 0 is the current picture: never signalled
				}
			}
		}
		inSlice := trial%2 == 1
		var w bitWriter
		w.flag(true) // inter_ref_pic_set_prediction_flag
		if inSlice {
			w.ue(0) // delta_idx_minus1
		}
		w.flag(deltaRps < 0)
		w.ue(int(max(deltaRps, -deltaRps)) - 1)
		for j := 0; j <= n; j++ {
			w.flag(used[j])
			if !used[j] {
				w.flag(useDelta[j])
			}
		}
		got, err := readShortTermRPS(&bitReader{b: w.b}, []hevcRPS{ref}, 1, inSlice)
		want := specRPS(ref, deltaRps, used, useDelta)
		if err != nil || !got.equal(&want) {
			t.Fatalf("set %+v predicted with deltaRps %d, used %v, use_delta %v: %+v (%v), the standard's %+v",
				ref, deltaRps, used, useDelta, got, err, want)
		}
	}
}

// TestHEVCPOC: ff_hevc_compute_poc's wrap-around, with C's remainder for a negative prevTid0Pic POC,
// and BLA pictures' MSB of 0.
func TestHEVCPOC(t *testing.T) {
	for _, c := range []struct {
		tid0, lsb, want int32
		typ             uint8
	}{
		{0, 5, 5, 1},
		{250, 2, 258, 1},   // LSBs wrapped forward (MaxLsb 256)
		{258, 250, 250, 1}, // a picture before prevTid0Pic across the wrap
		{0, 200, -56, 21},  // a CRA a fresh decoder starts at: a negative POC, as FFmpeg's
		{-56, 190, -66, 1}, // C's -56 % 256 is -56
		{300, 7, 7, 16},    // BLA: MSB 0
	} {
		if got := hevcPOC(c.tid0, c.lsb, 256, c.typ); got != c.want {
			t.Errorf("prevTid0 %d, lsb %d, type %d: POC %d, want %d", c.tid0, c.lsb, c.typ, got, c.want)
		}
	}
}
