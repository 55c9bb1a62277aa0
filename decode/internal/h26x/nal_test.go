package h26x

import "testing"

// whole runs a test of a packet view on the whole packet.
func whole(test func(View, int) (bool, bool), data []byte, n int) bool {
	r, _ := test(Whole(data), n)
	return r
}

// wholeHEVC is HEVCDisposable on the whole packet.
func wholeHEVC(data []byte, n, maxTid int) bool {
	r, _ := HEVCDisposable(Whole(data), n, maxTid)
	return r
}

// avcc frames NAL units with 4-byte big-endian lengths, as MP4/MKV packets carry them.
func avcc(nals ...[]byte) []byte {
	var b []byte
	for _, n := range nals {
		b = append(b, byte(len(n)>>24), byte(len(n)>>16), byte(len(n)>>8), byte(len(n)))
		b = append(b, n...)
	}
	return b
}

func TestH264Disposable(t *testing.T) {
	annexB := func(nals ...[]byte) []byte {
		var b []byte
		for i, n := range nals {
			if i == 0 {
				b = append(b, 0, 0, 0, 1)
			} else {
				b = append(b, 0, 0, 1)
			}
			b = append(b, n...)
		}
		return b
	}
	nonRefB := []byte{0x01, 0x9e, 0x11} // nal_ref_idc 0, type 1
	refP := []byte{0x41, 0x9a, 0x22}    // nal_ref_idc 2, type 1
	idr := []byte{0x65, 0x88, 0x80}     // type 5
	sei := []byte{0x06, 0x05, 0x01}     // type 6
	aud := []byte{0x09, 0xf0}
	for _, c := range []struct {
		name string
		data []byte
		len  int
		want bool
	}{
		{"avcc non-ref slice", avcc(nonRefB), 4, true},
		{"avcc sei + non-ref slices", avcc(sei, nonRefB, nonRefB), 4, true},
		{"avcc reference slice", avcc(refP), 4, false},
		{"avcc mixed slices", avcc(nonRefB, refP), 4, false},
		{"avcc idr", avcc(idr), 4, false},
		{"avcc no slice", avcc(sei), 4, false},
		{"avcc truncated length", avcc(nonRefB)[:2], 4, false},
		{"avcc length past the end", append([]byte{0, 0, 0, 9}, nonRefB...), 4, false},
		{"avcc 2-byte lengths", []byte{0, 3, 0x01, 0x9e, 0x11}, 2, true},
		{"length size 3", avcc(nonRefB), -1, false},
		{"forbidden bit", avcc([]byte{0x81, 0x9e}), 4, false},
		{"svc extension", avcc(nonRefB, []byte{0x14, 0x80}), 4, false},
		{"annex-b aud + non-ref", annexB(aud, nonRefB), 0, true},
		{"annex-b reference", annexB(aud, refP), 0, false},
		{"annex-b no start code", nonRefB, 0, false},
		{"empty", nil, 4, false},
	} {
		if got := whole(H264Disposable, c.data, c.len); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if n := H264NALLength([]byte{1, 0x64, 0, 0x1f, 0xff, 0xe1, 0}); n != 4 {
		t.Errorf("avcC lengthSizeMinusOne 3: %d", n)
	}
	if n := H264NALLength([]byte{1, 0x64, 0, 0x1f, 0xfe, 0xe1, 0}); n != -1 {
		t.Errorf("avcC length size 3: %d, want -1 (refused)", n)
	}
	if n := H264NALLength(nil); n != 0 {
		t.Errorf("no extradata: %d, want 0 (Annex-B)", n)
	}
}

func TestHEVCDisposable(t *testing.T) {
	nal := func(typ, tid byte, rest ...byte) []byte { return append([]byte{typ << 1, tid + 1}, rest...) }
	for _, c := range []struct {
		name   string
		data   []byte
		maxTid int
		want   bool
	}{
		{"TRAIL_N", avcc(nal(0, 0, 0xaf)), 0, true},
		{"SEI + TRAIL_N slices", avcc(nal(39, 0, 1), nal(0, 0, 0xaf), nal(0, 0, 0x2f)), 0, true},
		{"RASL_N", avcc(nal(8, 0, 0xaf)), 0, true},
		{"TRAIL_R", avcc(nal(1, 0, 0xaf)), 0, false},
		{"TRAIL_N then TRAIL_R", avcc(nal(0, 0, 0xaf), nal(1, 0, 0xaf)), 0, false},
		{"CRA", avcc(nal(21, 0, 0xaf)), 0, false},
		{"IDR", avcc(nal(19, 0, 0xaf)), 0, false},
		{"reserved RSV_VCL_N10", avcc(nal(10, 0, 0xaf)), 0, false},
		{"TRAIL_N below the top sub-layer", avcc(nal(0, 0, 0xaf)), 1, false},
		{"TSA_N at the top sub-layer", avcc(nal(2, 1, 0xaf)), 1, true},
		{"layer 1", avcc([]byte{0x01, 0x09, 0xaf}), 0, false},
		{"parameter sets only", avcc(nal(32, 0, 1), nal(33, 0, 1)), 0, false},
		{"truncated", avcc(nal(0, 0, 0xaf))[:3], 0, false},
	} {
		if got := wholeHEVC(c.data, 4, c.maxTid); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	hvcc := make([]byte, 23)
	hvcc[0] = 1
	hvcc[21] = 1<<3 | 3 // one temporal layer, 4-byte lengths
	if n, tid := HEVCConfig(hvcc); n != 4 || tid != 0 {
		t.Errorf("hvcC: length size %d, max TemporalId %d", n, tid)
	}
	hvcc[21] = 3 // numTemporalLayers 0: unknown
	if _, tid := HEVCConfig(hvcc); tid != -1 {
		t.Errorf("hvcC with an unknown layer count: max TemporalId %d, want -1", tid)
	}
	if n, tid := HEVCConfig(nil); n != 0 || tid != -1 {
		t.Errorf("no hvcC (raw Annex-B): length size %d, max TemporalId %d, want 0 and -1", n, tid)
	}
}

func FuzzH264Disposable(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 0x01, 0x9e, 0x11}, 4)
	f.Add([]byte{0, 0, 1, 0x09, 0xf0, 0, 0, 1, 0x01, 0x9e}, 0)
	f.Add(avcc([]byte{0x06, 0x05, 0x01}, []byte{0x01, 0x9e, 0x11}, []byte{0x01, 0x9e, 0x11}), 4)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < -1 || n > 4 {
			n = 4
		}
		h := whole(H264Disposable, data, n) // must not panic on any input
		hv := wholeHEVC(data, n, 0)
		r := whole(HEVCIsRASL, data, n)
		// A view of the packet's first bytes, when it says anything, says what the whole packet says.
		for k := 0; k <= len(data); k++ {
			pv := View{Head: data[:k], Size: len(data)}
			if got, known := H264Disposable(pv, n); known && got != h {
				t.Fatalf("H.264: the first %d of %d bytes say %v, the packet %v", k, len(data), got, h)
			}
			if got, known := HEVCDisposable(pv, n, 0); known && got != hv {
				t.Fatalf("HEVC: the first %d of %d bytes say %v, the packet %v", k, len(data), got, hv)
			}
			if got, known := HEVCIsRASL(pv, n); known && got != r {
				t.Fatalf("RASL: the first %d of %d bytes say %v, the packet %v", k, len(data), got, r)
			}
		}
	})
}

// TestPacketViews: the scan reads the first HeadBytes of a packet; a one-slice picture is decided
// from them, a picture whose later slices start past them needs the whole packet (known false), and
// Annex-B needs the whole packet too.
func TestPacketViews(t *testing.T) {
	big := make([]byte, 1000)
	big[0] = 0x01 // nal_ref_idc 0, type 1
	oneSlice := avcc([]byte{0x06, 0x05, 0x01}, big)
	if d, known := H264Disposable(View{Head: oneSlice[:HeadBytes], Size: len(oneSlice)}, 4); !known || !d {
		t.Errorf("one non-reference slice: disposable %v, known %v from the head", d, known)
	}
	ref := append([]byte{0x41}, big[1:]...) // nal_ref_idc 2
	twoSlices := avcc(big, ref)
	if _, known := H264Disposable(View{Head: twoSlices[:HeadBytes], Size: len(twoSlices)}, 4); known {
		t.Error("a second slice past the head: decided without reading it")
	}
	if whole(H264Disposable, twoSlices, 4) {
		t.Error("a reference slice after a non-reference one: disposable")
	}
	annexB := append([]byte{0, 0, 0, 1}, big...)
	if _, known := H264Disposable(View{Head: annexB[:HeadBytes], Size: len(annexB)}, 0); known {
		t.Error("Annex-B decided from the head")
	}
	hevc := avcc([]byte{8 << 1, 1, 0xaf}, make([]byte, 500)) // RASL_N, then a NAL unit starting past the head
	if r, known := HEVCIsRASL(View{Head: hevc[:HeadBytes], Size: len(hevc)}, 4); !known || !r {
		t.Errorf("RASL first: %v, known %v", r, known)
	}
}

// TestHEVCLengthSize3: one hvcC parser serves the index scan (RASL pictures) and the non-reference
// drop. A length size of 3 is read as 3, as FFmpeg's decoder splits such packets, so RASL pictures are
// found (decode's TestDisposableFunc: nothing is dropped on such a stream).
func TestHEVCLengthSize3(t *testing.T) {
	hvcc := make([]byte, 23)
	hvcc[0] = 1
	hvcc[21] = 1<<3 | 2 // one temporal layer, lengthSizeMinusOne 2
	if n, tid := HEVCConfig(hvcc); n != 3 || tid != 0 {
		t.Fatalf("hvcC length size 3: got length size %d, max TemporalId %d", n, tid)
	}
	len3 := func(nals ...[]byte) []byte {
		var b []byte
		for _, n := range nals {
			b = append(b, byte(len(n)>>16), byte(len(n)>>8), byte(len(n)))
			b = append(b, n...)
		}
		return b
	}
	nal := func(typ byte) []byte { return []byte{typ << 1, 1, 0xaf, 0x11} }
	for _, c := range []struct {
		name    string
		data    []byte
		lenSize int
		want    bool
	}{
		{"3-byte lengths, SEI + RASL_N", len3(nal(39), nal(8)), 3, true},
		{"3-byte lengths, RASL_R", len3(nal(9)), 3, true},
		{"3-byte lengths, TRAIL_R", len3(nal(1)), 3, false},
		{"3-byte lengths read as 4", len3(nal(8)), 4, false},
		{"4-byte lengths, RASL_N", avcc(nal(32), nal(8)), 4, true},
		{"4-byte lengths, RADL_N", avcc(nal(6)), 4, false},
		{"Annex-B despite hvcC", append([]byte{0, 0, 0, 1}, append(nal(8), 0, 0, 1, 2, 1)...), 4, true},
		// A 4-byte length of 256..511 starts 00 00 01, as a start code does: FFmpeg reads it as a length.
		{"300-byte RADL_N, 4-byte lengths", avcc(append([]byte{6 << 1, 1}, make([]byte, 298)...)), 4, false},
		{"300-byte RASL_N, 4-byte lengths", avcc(append([]byte{8 << 1, 1}, make([]byte, 298)...)), 4, true},
		{"SEI of 260 bytes, then RASL_R", avcc(append([]byte{39 << 1, 1}, make([]byte, 258)...), nal(9)), 4, true},
		{"Annex-B, AUD first", append([]byte{0, 0, 1}, append([]byte{35 << 1, 1, 0x50}, append([]byte{0, 0, 1}, nal(9)...)...)...), 0, true},
		{"Annex-B without a start code", nal(8), 0, false},
		{"truncated", len3(nal(8))[:4], 3, false},
	} {
		if got := whole(HEVCIsRASL, c.data, c.lenSize); got != c.want {
			t.Errorf("%s: RASL %v, want %v", c.name, got, c.want)
		}
	}
}
