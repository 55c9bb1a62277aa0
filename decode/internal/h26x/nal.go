package h26x

// Pictures that no other picture references (decode's nonref.go says how the schedule uses them):
//   - H.264 marks them in every slice NAL header: nal_ref_idc = 0 (ITU-T H.264 §7.4.1);
//   - HEVC's "_N" slice types (TRAIL_N, TSA_N, STSA_N, RADL_N, RASL_N) are sub-layer non-reference
//     pictures (ITU-T H.265 §3.132), droppable only at the stream's highest sub-layer.

// View is the start of a packet (Head) and the packet's whole size. The index scan copies only the
// first HeadBytes out of FFmpeg, which hold every NAL unit header when the packet's last NAL unit
// starts there, as in the usual one-slice picture; otherwise the whole packet is read.
type View struct {
	Head []byte
	Size int
}

// HeadBytes is how much of a packet the index scan reads first.
const HeadBytes = 128

// Whole is the view of a whole packet.
func Whole(b []byte) View { return View{Head: b, Size: len(b)} }

// H264NALLength returns how an H.264 stream's packets are framed, from its extradata: the NAL length
// size (1, 2 or 4) for AVCC (avcC box, MP4/MKV), 0 for Annex-B start codes (MPEG-TS, raw .h264), -1
// for a length size of 3, which ISO/IEC 14496-15 does not allow (nothing is guessed then).
func H264NALLength(extradata []byte) int {
	if len(extradata) >= 7 && extradata[0] == 1 {
		if n := int(extradata[4]&3) + 1; n != 3 {
			return n
		}
		return -1
	}
	return 0
}

// HEVCConfig reads an hvcC box (ISO/IEC 14496-15 §8.3.3): the NAL length size (1..4; 0 = no hvcC, the
// packets are Annex-B) and the highest TemporalId (numTemporalLayers − 1; -1 when the box says 0,
// "unknown"). A length size of 3, which 14496-15 does not allow, is returned as 3: FFmpeg's decoder
// splits the packets so (hevc_parse.c), and the index scan must read them as the decoder does.
func HEVCConfig(extradata []byte) (lenSize, maxTid int) {
	if len(extradata) < 23 || extradata[0] != 1 {
		return 0, -1
	}
	b := extradata[21]
	return int(b&3) + 1, int(b>>3&7) - 1
}

// HEVCIsRASL reports whether the packet's first VCL NAL unit is a RASL picture (types 8, 9). lenSize is
// the NAL length size from hvcC, or 0 for Annex-B; a packet is framed as hevcFraming says. known is
// false when the view does not reach the first VCL NAL unit.
func HEVCIsRASL(pv View, lenSize int) (rasl, known bool) {
	if len(pv.Head) < 4 && len(pv.Head) < pv.Size {
		return false, false // too few bytes to tell a start code from a length prefix
	}
	if lenSize, known = hevcFraming(pv, lenSize); !known {
		return false, false
	}
	_, known = eachNALIn(pv, lenSize, func(nal []byte) bool {
		if len(nal) < 2 {
			return true
		}
		if t := nal[0] >> 1 & 0x3f; t < 32 { // the first VCL NAL unit decides
			rasl = t == 8 || t == 9
			return false
		}
		return true
	})
	return rasl, known
}

// hevcFraming is the NAL length size a packet of an HEVC stream is read with: lenSize (from hvcC; 0 for
// Annex-B), as FFmpeg's decoder reads it (ff_h2645_packet_split reads lengths first), except for a
// packet that starts with a start code and does not read as a chain of lengths, which is Annex-B
// (streams muxed from Annex-B sources sometimes are). A first NAL unit of 256 to 511 bytes with 4-byte
// lengths starts 00 00 01 too: it reads as lengths. known is false when the view holds too few length
// fields to tell.
func hevcFraming(pv View, lenSize int) (int, bool) {
	b := pv.Head
	if lenSize == 0 || len(b) < 4 || b[0] != 0 || b[1] != 0 || (b[2] != 1 && (b[2] != 0 || b[3] != 1)) {
		return lenSize, true
	}
	ok, known := eachNALIn(pv, lenSize, func([]byte) bool { return true })
	switch {
	case !known:
		return 0, false
	case ok:
		return lenSize, true
	}
	return 0, true
}

// H264Disposable reports whether an H.264 access unit is a non-reference picture: it has at least
// one slice NAL (types 1..5) and every one has nal_ref_idc 0. Anything it cannot parse is not
// disposable (the packet is decoded as usual). known is false when the view does not hold every NAL
// unit header.
func H264Disposable(pv View, nalLen int) (disposable, known bool) {
	slices := 0
	ok, known := eachNALIn(pv, nalLen, func(nal []byte) bool {
		h := nal[0]
		if h&0x80 != 0 { // forbidden_zero_bit
			return false
		}
		switch typ := h & 0x1f; {
		case typ == 5: // IDR: always a reference
			return false
		case typ >= 1 && typ <= 4:
			if h&0x60 != 0 { // nal_ref_idc
				return false
			}
			slices++
		case typ == 20 || typ == 21: // SVC/MVC extensions: leave them alone
			return false
		}
		return true
	})
	return ok && slices > 0, known
}

// HEVCDisposable reports whether an HEVC access unit is a sub-layer non-reference picture at the
// highest sub-layer maxTid, in the base layer: at least one VCL NAL, each of type TRAIL_N, TSA_N,
// STSA_N, RADL_N or RASL_N with that TemporalId and nuh_layer_id 0. known is false when the view does
// not hold every NAL unit header.
func HEVCDisposable(pv View, nalLen, maxTid int) (disposable, known bool) {
	slices := 0
	ok, known := eachNALIn(pv, nalLen, func(nal []byte) bool {
		if len(nal) < 2 || nal[0]&0x80 != 0 {
			return false
		}
		typ := nal[0] >> 1 & 0x3f
		layer := (nal[0]&1)<<5 | nal[1]>>3
		tid := int(nal[1]&7) - 1
		switch {
		case typ >= 32: // parameter sets, SEI, AUD…: no picture data
			return true
		case typ > 8 || typ%2 == 1 || layer != 0 || tid != maxTid:
			return false // a reference type, IRAP, reserved, another layer or a lower sub-layer
		}
		slices++
		return true
	})
	return ok && slices > 0, known
}

// eachNALIn calls visit on each non-empty NAL unit of a packet seen through pv: length-prefixed
// (nalLen 1, 2, 3 or 4 bytes) or, with nalLen 0, Annex-B start codes. ok is false when visit returns
// false or the framing is broken. visit may look at a NAL unit's first two bytes only (and at whether
// it has two): of a NAL unit that runs past the view it gets what the view holds, at least that. known
// is false when the view ends before a NAL unit's length or first bytes (visit has then not seen them
// all) and for Annex-B framing unless the view is the whole packet (start codes cannot be found
// without reading every byte).
func eachNALIn(pv View, nalLen int, visit func([]byte) bool) (ok, known bool) {
	switch {
	case nalLen < 0:
		return false, true
	case nalLen > 0:
		data := pv.Head
		for off := 0; off < pv.Size; {
			if pv.Size-off < nalLen {
				return false, true
			}
			if off+nalLen > len(data) {
				return false, false
			}
			n := 0
			for _, b := range data[off : off+nalLen] {
				n = n<<8 | int(b)
			}
			off += nalLen
			if n > pv.Size-off {
				return false, true
			}
			if n > 0 {
				seen := min(n, len(data)-off)
				if seen < min(n, 2) {
					return false, false
				}
				if !visit(data[off : off+seen]) {
					return false, true
				}
			}
			off += n
		}
		return true, true
	}
	if len(pv.Head) != pv.Size {
		return false, false
	}
	return eachAnnexB(pv.Head, visit), true
}

// eachAnnexB calls visit on each NAL unit after a start code (00 00 01, or 00 00 00 01).
func eachAnnexB(data []byte, visit func([]byte) bool) bool {
	start := -1
	for i := 0; i+2 < len(data); i++ {
		if data[i] == 0 && data[i+1] == 0 && data[i+2] == 1 {
			if start >= 0 {
				if nal := trimZeros(data[start:i]); len(nal) > 0 && !visit(nal) {
					return false
				}
			}
			start = i + 3
			i += 2
		}
	}
	if start < 0 {
		return false
	}
	if nal := data[start:]; len(nal) > 0 {
		return visit(nal)
	}
	return true
}

// trimZeros drops the trailing zero bytes before a 4-byte start code.
func trimZeros(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}
