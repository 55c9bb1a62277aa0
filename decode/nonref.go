package decode

import (
	"github.com/asticode/go-astiav"

	"github.com/framesweep/framesweep/decode/internal/h26x"
)

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
// The bitstream side (NAL framing, the tests on each packet) is package h26x, which is pure Go.

// disposableFunc returns the test that tells a packet nobody references (known false when the view
// does not hold every NAL unit header: test the whole packet then), or nil when this stream's packets
// cannot be told apart (another codec, an unknown framing, no temporal-layer count).
func disposableFunc(codec astiav.CodecID, extradata []byte) func(h26x.View) (disposable, known bool) {
	switch codec {
	case astiav.CodecIDH264:
		n := h26x.H264NALLength(extradata)
		if n < 0 {
			return nil
		}
		return func(pv h26x.View) (bool, bool) { return h26x.H264Disposable(pv, n) }
	case astiav.CodecIDHevc:
		n, maxTid := h26x.HEVCConfig(extradata)
		if n <= 0 || n == 3 || maxTid < 0 {
			return nil // Annex-B, a length size 14496-15 does not allow (as for H.264), or no layer count
		}
		return func(pv h26x.View) (bool, bool) { return h26x.HEVCDisposable(pv, n, maxTid) }
	}
	return nil
}

// packetHead is the view of pkt's first h26x.HeadBytes (the packet is left as it was): go-astiav's
// Packet.Data copies the whole payload (200 MB for the 600 s bench clip), and the head holds every NAL
// unit header of the usual one-slice picture.
func packetHead(pkt *astiav.Packet) h26x.View {
	size := pkt.Size()
	if size <= h26x.HeadBytes {
		return h26x.Whole(pkt.Data())
	}
	pkt.SetSize(h26x.HeadBytes)
	head := pkt.Data()
	pkt.SetSize(size)
	return h26x.View{Head: head, Size: size}
}

// decide runs test on the view and, when the view does not say, on the whole packet.
func decide(pkt *astiav.Packet, pv h26x.View, test func(h26x.View) (bool, bool)) bool {
	if r, known := test(pv); known {
		return r
	}
	r, _ := test(h26x.Whole(pkt.Data()))
	return r
}

// refModel is a stream's reference structure (h26x.H264Refs, h26x.HEVCRefs): which reference pictures
// of a segment the wanted frames can do without.
type refModel interface {
	LeaveOut(key, end int, need []bool) []int
}

// refCollector reads a stream's reference structure during the index scan.
type refCollector struct {
	h264 *h26x.H264Collector
	hevc *h26x.HEVCCollector
}

// newRefCollector starts the analysis for an H.264 or HEVC stream (nothing for other codecs).
func newRefCollector(codec astiav.CodecID, extradata []byte) refCollector {
	switch codec {
	case astiav.CodecIDH264:
		return refCollector{h264: h26x.NewH264Collector(extradata)}
	case astiav.CodecIDHevc:
		return refCollector{hevc: h26x.NewHEVCCollector(extradata)}
	}
	return refCollector{}
}

// Add reads the next packet (see h26x's Add).
func (c refCollector) Add(pv h26x.View, whole func() h26x.View) {
	switch {
	case c.h264 != nil:
		c.h264.Add(pv, whole)
	case c.hevc != nil:
		c.hevc.Add(pv, whole)
	}
}

// result is the analysis, or nil (a nil interface, not a typed nil) when there is none.
func (c refCollector) result(packets int) refModel {
	if r := c.h264.Result(packets); r != nil {
		return r
	}
	if r := c.hevc.Result(packets); r != nil {
		return r
	}
	return nil
}
