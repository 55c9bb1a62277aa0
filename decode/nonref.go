package decode

import "github.com/asticode/go-astiav"

// Pictures that no other picture references can be left out of the decoder when no one asked for
// them: their packets are dropped before avcodec_send_packet, so a decode-once pass pays only for the
// frames it returns and those they depend on. Frames are identified by pts, so dropping one changes
// no other frame's index or pixels (tested against the decode of every packet, nonref_test.go).
//   - H.264 marks them in every slice NAL header: nal_ref_idc = 0 (ITU-T H.264 §7.4.1); x264's
//     default B-frames are mostly such pictures.
//   - HEVC's "_N" slice types (TRAIL_N, TSA_N, STSA_N, RADL_N, RASL_N) are sub-layer non-reference
//     pictures (ITU-T H.265 §3.132): higher temporal sub-layers may still reference them, so a picture
//     is dropped only at the stream's highest sub-layer, known from the hvcC box (numTemporalLayers);
//     raw Annex-B HEVC carries no hvcC and is decoded in full. Neither kind is the prevTid0Pic that
//     POC derivation uses (§8.3.1), nor a reference for H.264's POC and frame_num (§8.2.1).

// disposableFunc returns the test that tells a packet nobody references (known false when the view
// does not hold every NAL unit header: test the whole packet then), or nil when this stream's packets
// cannot be told apart (another codec, an unknown framing, no temporal-layer count).
func disposableFunc(codec astiav.CodecID, extradata []byte) func(packetView) (disposable, known bool) {
	switch codec {
	case astiav.CodecIDH264:
		n := h264NALLength(extradata)
		if n < 0 {
			return nil
		}
		return func(pv packetView) (bool, bool) { return h264DisposableIn(pv, n) }
	case astiav.CodecIDHevc:
		n, maxTid := hevcConfig(extradata)
		if n <= 0 || n == 3 || maxTid < 0 {
			return nil // Annex-B, a length size 14496-15 does not allow (as for H.264), or no layer count
		}
		return func(pv packetView) (bool, bool) { return hevcDisposableIn(pv, n, maxTid) }
	}
	return nil
}

// packetView is the start of a packet (head) and the packet's whole size. The index scan copies only
// the first packetHeadBytes out of FFmpeg (go-astiav's Packet.Data copies the whole payload: 200 MB
// for the 600 s bench clip), which hold every NAL unit header when the packet's last NAL unit starts
// there, as in the usual one-slice picture; otherwise the whole packet is read.
type packetView struct {
	head []byte
	size int
}

const packetHeadBytes = 128

func wholePacket(b []byte) packetView { return packetView{head: b, size: len(b)} }

// packetHead is the view of pkt's first packetHeadBytes (the packet is left as it was).
func packetHead(pkt *astiav.Packet) packetView {
	size := pkt.Size()
	if size <= packetHeadBytes {
		return wholePacket(pkt.Data())
	}
	pkt.SetSize(packetHeadBytes)
	head := pkt.Data()
	pkt.SetSize(size)
	return packetView{head: head, size: size}
}

// decide runs test on the view and, when the view does not say, on the whole packet.
func decide(pkt *astiav.Packet, pv packetView, test func(packetView) (bool, bool)) bool {
	if r, known := test(pv); known {
		return r
	}
	r, _ := test(wholePacket(pkt.Data()))
	return r
}

// h264NALLength returns how an H.264 stream's packets are framed, from its extradata: the NAL length
// size (1, 2 or 4) for AVCC (avcC box, MP4/MKV), 0 for Annex-B start codes (MPEG-TS, raw .h264).
func h264NALLength(extradata []byte) int {
	if len(extradata) >= 7 && extradata[0] == 1 {
		if n := int(extradata[4]&3) + 1; n != 3 {
			return n
		}
		return -1 // a length size of 3 is not allowed: do not guess
	}
	return 0
}

// hevcConfig reads an hvcC box (ISO/IEC 14496-15 §8.3.3): the NAL length size (1..4; 0 = no hvcC, the
// packets are Annex-B) and the highest TemporalId (numTemporalLayers − 1; -1 when the box says 0,
// "unknown"). A length size of 3, which 14496-15 does not allow, is returned as 3: FFmpeg's decoder
// splits the packets so (hevc_parse.c), and the index scan must read them as the decoder does.
func hevcConfig(extradata []byte) (lenSize, maxTid int) {
	if len(extradata) < 23 || extradata[0] != 1 {
		return 0, -1
	}
	b := extradata[21]
	return int(b&3) + 1, int(b>>3&7) - 1
}

// hevcIsRASL reports whether the packet's first VCL NAL unit is a RASL picture (types 8, 9). lenSize is
// the NAL length size from hvcC, or 0 for Annex-B; a packet that starts with a start code is read as
// Annex-B whatever the box says (streams muxed from Annex-B sources sometimes are).
func hevcIsRASL(b []byte, lenSize int) bool {
	r, _ := hevcIsRASLIn(wholePacket(b), lenSize)
	return r
}

// hevcIsRASLIn is hevcIsRASL on a view; known is false when the view does not reach the first VCL NAL
// unit.
func hevcIsRASLIn(pv packetView, lenSize int) (rasl, known bool) {
	if len(pv.head) < 4 && len(pv.head) < pv.size {
		return false, false // too few bytes to tell a start code from a length prefix
	}
	if b := pv.head; len(b) > 3 && b[0] == 0 && b[1] == 0 && (b[2] == 1 || (b[2] == 0 && b[3] == 1)) {
		lenSize = 0
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

// h264Disposable reports whether an H.264 access unit is a non-reference picture: it has at least
// one slice NAL (types 1..5) and every one has nal_ref_idc 0. Anything it cannot parse is not
// disposable (the packet is decoded as usual).
func h264Disposable(data []byte, nalLen int) bool {
	r, _ := h264DisposableIn(wholePacket(data), nalLen)
	return r
}

// h264DisposableIn is h264Disposable on a view; known is false when the view does not hold every
// NAL unit header.
func h264DisposableIn(pv packetView, nalLen int) (disposable, known bool) {
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

// hevcDisposable reports whether an HEVC access unit is a sub-layer non-reference picture at the
// highest sub-layer maxTid, in the base layer: at least one VCL NAL, each of type TRAIL_N, TSA_N,
// STSA_N, RADL_N or RASL_N with that TemporalId and nuh_layer_id 0.
func hevcDisposable(data []byte, nalLen, maxTid int) bool {
	r, _ := hevcDisposableIn(wholePacket(data), nalLen, maxTid)
	return r
}

// hevcDisposableIn is hevcDisposable on a view; known is false when the view does not hold every
// NAL unit header.
func hevcDisposableIn(pv packetView, nalLen, maxTid int) (disposable, known bool) {
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

// eachNAL calls visit on each non-empty NAL unit of a packet: length-prefixed (nalLen 1, 2 or 4 bytes)
// or, with nalLen 0, Annex-B start codes. It returns false when visit does or the framing is broken.
func eachNAL(data []byte, nalLen int, visit func([]byte) bool) bool {
	ok, _ := eachNALIn(wholePacket(data), nalLen, visit)
	return ok
}

// eachNALIn is eachNAL on a view of a packet. visit may look at a NAL unit's first two bytes only (and
// at whether it has two): of a NAL unit that runs past the view it gets what the view holds, at least
// that. known is false when the view ends before a NAL unit's length or first bytes (visit has then
// not seen them all) and for Annex-B framing unless the view is the whole packet (start codes cannot be
// found without reading every byte).
func eachNALIn(pv packetView, nalLen int, visit func([]byte) bool) (ok, known bool) {
	switch {
	case nalLen < 0:
		return false, true
	case nalLen > 0:
		data := pv.head
		for off := 0; off < pv.size; {
			if pv.size-off < nalLen {
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
			if n > pv.size-off {
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
	if len(pv.head) != pv.size {
		return false, false
	}
	return eachAnnexB(pv.head, visit), true
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
