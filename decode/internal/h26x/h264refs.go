package h26x

import "slices"

// Reference pictures nobody needs. decode leaves out the pictures no other picture references (nal.go);
// x264's B-pyramid (its default) also makes reference B-frames, which P-frames do not use: in the
// 600 s bench clip a third of the pictures up to each wanted frame are such B-frames. Which pictures
// a picture uses is in its slice headers (the reference lists and their modifications), so decode's
// index scan reads them (h264hdr.go, through H264Collector) and its schedule decodes, per segment, only
// the pictures its frames use, directly or through others (H264Refs.LeaveOut).
//
// Leaving a reference picture out is not free of consequences in the decoder: FFmpeg fills the
// frame_num gap with a made-up picture (a copy of the previous reference, POC + 2, sliding-window
// marking), the picture's own memory management operations do not run, and the next reference
// picture's POC derives from an earlier one. So the choice is checked by simulating FFmpeg 5.1's
// reference handling (libavcodec/h264_refs.c and h264_slice.c: reference list initialisation, list
// modification, marking, gap filling) over the segment twice: with every picture and with only those
// to be decoded. A picture is left out only when every decoded picture then gets the same POC and the
// same reference pictures, entry by entry, and nothing FFmpeg would log as an error happens; otherwise
// left-out pictures are taken back, the latest before the first difference first, until the two
// agree. Streams the model does not cover (field pictures, long-term references, MMCO other than
// unmarking, POC types 1 and 2, SP/SI slices, slice groups, segments that do not start at an IDR
// picture) are decoded as before.

// H264Refs is a stream's reference structure: the picture in each packet, by decode position.
type H264Refs struct {
	sps  h264SPS
	pics []h264Pic
	has  []bool // the packet holds a picture (slices)
}

// H264Collector builds H264Refs during the index scan.
type H264Collector struct {
	nalLen int
	params h264Params
	refs   H264Refs
	spsSet bool
	off    bool // the stream uses something the model does not cover: no analysis
}

// NewH264Collector starts the analysis from the stream's extradata (an avcC box, or Annex-B
// parameter sets); nil when the framing is unknown.
func NewH264Collector(extradata []byte) *H264Collector {
	n := H264NALLength(extradata)
	if n < 0 {
		return nil
	}
	c := &H264Collector{nalLen: n, params: h264Params{sps: map[int]h264SPS{}, pps: map[int]h264PPS{}}}
	for _, nal := range extradataNALs(extradata) {
		c.paramSet(nal)
	}
	return c
}

// sizedNALs appends to out the count NAL units that start at b[i], each after its 16-bit big-endian
// size (the entries of avcC and hvcC boxes), and returns the offset after them; ok is false when b
// ends first (out then holds the complete ones).
func sizedNALs(b []byte, i, count int, out [][]byte) (_ [][]byte, next int, ok bool) {
	for k := 0; k < count; k++ {
		if i+2 > len(b) {
			return out, i, false
		}
		n := int(b[i])<<8 | int(b[i+1])
		if i+2+n > len(b) {
			return out, i, false
		}
		out = append(out, b[i+2:i+2+n])
		i += 2 + n
	}
	return out, i, true
}

// extradataNALs lists the parameter set NAL units of an avcC box (ISO/IEC 14496-15 §5.3.3.1) or of
// Annex-B extradata.
func extradataNALs(b []byte) [][]byte {
	var out [][]byte
	if len(b) < 7 || b[0] != 1 {
		eachAnnexB(b, func(nal []byte) bool { out = append(out, nal); return true })
		return out
	}
	i, count := 6, int(b[5]&0x1f)
	for set := 0; set < 2; set++ {
		var ok bool
		if out, i, ok = sizedNALs(b, i, count, out); !ok {
			return out
		}
		if set == 0 {
			if i >= len(b) {
				return out
			}
			count = int(b[i])
			i++
		}
	}
	return out
}

// paramSet records an SPS or PPS. Every slice must use SPS fields equal to the first SPS's.
func (c *H264Collector) paramSet(nal []byte) {
	if len(nal) < 2 {
		return
	}
	switch nal[0] & 0x1f {
	case 7:
		id, s, err := parseH264SPS(nal)
		switch {
		case err != nil:
			c.off = true
		case c.spsSet && s != c.refs.sps:
			c.off = true
		default:
			c.params.sps[id], c.refs.sps, c.spsSet = s, s, true
		}
	case 8:
		id, p, err := parseH264PPS(nal)
		if err != nil {
			c.off = true
			return
		}
		c.params.pps[id] = p
	}
}

// Add reads the next packet (its view; whole gives the whole packet when the view is cut short).
func (c *H264Collector) Add(pv View, whole func() View) {
	if c.off {
		return
	}
	pic, has, err := c.picture(pv)
	if err == errH264Short && len(pv.Head) < pv.Size {
		pic, has, err = c.picture(whole())
	}
	if err != nil {
		c.off = true
		return
	}
	c.refs.pics = append(c.refs.pics, pic)
	c.refs.has = append(c.refs.has, has)
}

// picture reads one packet's NAL units: parameter sets, then the slices of one picture.
func (c *H264Collector) picture(pv View) (h264Pic, bool, error) {
	var pic h264Pic
	var err error
	nSlices := 0
	ok, known := eachNALIn(pv, c.nalLen, func(nal []byte) bool {
		switch t := nal[0] & 0x1f; {
		case t == 7 || t == 8:
			c.paramSet(nal)
		case t == 1 || t == 5:
			p, sl, e := parseH264Slice(nal, &c.params)
			if e != nil {
				err = e
				return false
			}
			if nSlices == 0 {
				pic = p
			} else if p.idr != pic.idr || p.ref != pic.ref || p.frameNum != pic.frameNum || p.pocLsb != pic.pocLsb ||
				p.adaptive != pic.adaptive || !slices.Equal(p.mmco, pic.mmco) {
				err = errH264Unsupported // two pictures in a packet, or slices that disagree
				return false
			}
			pic.slices = append(pic.slices, sl)
			nSlices++
		case t >= 2 && t <= 4, t == 20, t == 21: // data partitioning, SVC/MVC
			err = errH264Unsupported
			return false
		}
		return true
	})
	switch {
	case err != nil:
		return pic, false, err
	case !known:
		return pic, false, errH264Short
	case !ok || c.off:
		return pic, false, errH264Unsupported
	}
	return pic, nSlices > 0, nil
}

// Result is the stream's analysis, or nil when it is off or the packets do not line up.
func (c *H264Collector) Result(packets int) *H264Refs {
	if c == nil || c.off || !c.spsSet || len(c.refs.pics) != packets {
		return nil
	}
	return &c.refs
}

// Bounds on the work spent choosing what to leave out of one segment (the decode it saves is far
// larger): simulated pictures in all, and pictures taken back.
const (
	maxSimPictures = 1 << 20
	maxTakeBacks   = 256
)

// LeaveOut returns the reference pictures in the segment [key, end] that the frames at the decode
// positions marked in need do not use, directly or through other pictures, and whose absence leaves
// every decoded picture as it is in a full decode (checked by the model): by decode position,
// ascending. nil when there are none, or when the segment does not start at an IDR picture or the
// model does not cover it.
func (h *H264Refs) LeaveOut(key, end int, need []bool) []int {
	if key < 0 || end >= len(h.pics) || !h.has[key] || !h.pics[key].idr {
		return nil
	}
	full := make(map[int]picRefs, end-key+1)
	s := newRefSim(h.sps)
	for d := key; d <= end; d++ {
		if h.has[d] {
			full[d] = s.decode(d, &h.pics[d])
		}
	}
	if s.bad {
		return nil // the stream itself is outside the model (or damaged)
	}
	feed := make([]bool, end-key+1)
	feed[0] = true
	for d := end; d >= key; d-- {
		if need[d] || feed[d-key] {
			h.takeBack(feed, key, d, full)
		}
	}
	budget := maxSimPictures
	for tries := 0; ; tries++ {
		bad := h.firstDifference(feed, key, end, full, &budget)
		if bad < 0 {
			break
		}
		back := -1
		for d := bad - 1; d >= key; d-- {
			if h.has[d] && h.pics[d].ref && !feed[d-key] {
				back = d
				break
			}
		}
		if back < 0 || tries >= maxTakeBacks || budget <= 0 {
			return nil
		}
		h.takeBack(feed, key, back, full)
	}
	var out []int
	for d := key; d <= end; d++ {
		if h.has[d] && h.pics[d].ref && !feed[d-key] {
			out = append(out, d)
		}
	}
	return out
}

// takeBack marks picture d as decoded, with the pictures it uses (transitively, in the full decode).
func (h *H264Refs) takeBack(feed []bool, key, d int, full map[int]picRefs) {
	stack := []int{d}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if d < key || d-key >= len(feed) {
			continue
		}
		feed[d-key] = true
		for _, id := range full[d].refs {
			if id >= 0 && int(id) >= key && !feed[int(id)-key] {
				stack = append(stack, int(id))
			}
		}
	}
}

// firstDifference simulates the decode of the fed pictures and returns the first whose POC or
// references differ from the full decode's, or at which FFmpeg would log an error; -1 when none.
func (h *H264Refs) firstDifference(feed []bool, key, end int, full map[int]picRefs, budget *int) int {
	s := newRefSim(h.sps)
	for d := key; d <= end; d++ {
		if !feed[d-key] || !h.has[d] {
			continue
		}
		*budget--
		got := s.decode(d, &h.pics[d])
		if want := full[d]; s.bad || got.poc != want.poc || !slices.Equal(got.refs, want.refs) {
			return d
		}
	}
	return -1
}
