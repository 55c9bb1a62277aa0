package decode

// Pictures that no other picture references can be left out of the decoder when no one asked for
// them: their packets are dropped before avcodec_send_packet, so a decode-once pass pays only for the
// frames it returns and those they depend on. H.264 marks them in every slice NAL header
// (nal_ref_idc = 0, ITU-T H.264 §7.4.1); x264's default B-frames are mostly such pictures. Frames are
// identified by pts, so dropping one changes no other frame's index or pixels (tested against the
// decode of every packet). HEVC's "_N" pictures are non-reference only within their temporal
// sub-layer, which would need the SPS: not done.

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

// h264Disposable reports whether an H.264 access unit is a non-reference picture: it has at least
// one slice NAL (types 1..5) and every one has nal_ref_idc 0. Anything it cannot parse is not
// disposable (the packet is decoded as usual).
func h264Disposable(data []byte, nalLen int) bool {
	slices := 0
	visit := func(nal []byte) bool {
		if len(nal) == 0 {
			return true
		}
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
	}
	switch {
	case nalLen < 0:
		return false
	case nalLen > 0:
		for len(data) > 0 {
			if len(data) < nalLen {
				return false
			}
			n := 0
			for _, b := range data[:nalLen] {
				n = n<<8 | int(b)
			}
			data = data[nalLen:]
			if n > len(data) || !visit(data[:n]) {
				return false
			}
			data = data[n:]
		}
	default:
		// Annex-B: NAL units start after 00 00 01 (or 00 00 00 01).
		start := -1
		for i := 0; i+2 < len(data); i++ {
			if data[i] == 0 && data[i+1] == 0 && data[i+2] == 1 {
				if start >= 0 && !visit(trimZeros(data[start:i])) {
					return false
				}
				start = i + 3
				i += 2
			}
		}
		if start < 0 {
			return false
		}
		if !visit(data[start:]) {
			return false
		}
	}
	return slices > 0
}

// trimZeros drops the trailing zero bytes before a 4-byte start code.
func trimZeros(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}
