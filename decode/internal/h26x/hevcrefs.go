package h26x

import "slices"

// Reference pictures nobody needs, in HEVC. decode leaves out the sub-layer non-reference pictures
// nobody asked for (nal.go); the reference pictures (TRAIL_R, the IRAP pictures…) it decoded all,
// though some are used only by pictures nobody asked for: with x265's B-pyramid and one reference
// (its ultrafast and superfast presets) the middle B-frame of each mini-GOP is a reference picture
// only the B-frames beside it use, and with temporal layers a picture of a middle layer is used only
// by the layers above. Which pictures a picture uses is in its slice headers: the reference picture
// set (the pictures it keeps, and which of them it may use), the active list sizes and their
// modifications (hevchdr.go, through HEVCCollector). For each segment the plan keeps only the pictures
// its frames use, directly or through others (HEVCRefs.LeaveOut).
//
// Leaving a picture out is not free of consequences in FFmpeg's decoder: a later picture whose
// reference picture set names it finds it missing, logs "Could not find ref with POC" and makes up a
// grey picture in its place (hevc_refs.c generate_missing_ref), and the POC of later pictures derives
// from the last picture of temporal sub-layer 0 decoded (prevTid0Pic, §8.3.1). A made-up picture is
// harmless while it stays out of every decoded picture's active lists, so the choice is checked by
// simulating FFmpeg 5.1's reference handling (hevc_refs.c ff_hevc_frame_rps, ff_hevc_slice_rpl;
// hevcdec.c POC, RASL skipping, sequences) over the segment twice: with every packet and with only
// those to be sent. A picture is left out only when every decoded picture then gets the same POC, is
// decoded or skipped alike, and has the same pictures, entry by entry, in its active lists; otherwise
// pictures are taken back (those the first differing list names, or the latest before the first
// difference) until the two agree. Streams the model does not cover (layers other than the base one,
// end-of-sequence units, parameter sets that change, several pictures in a packet, separate colour
// planes, screen content coding) are decoded as before, and so is a segment the model finds anything
// odd in (a decoded picture that uses a missing reference in the full decode, a look-up FFmpeg's
// output timing could decide, a segment that does not start at an IRAP picture).

// HEVCRefs is a stream's reference structure: the picture in each packet, by decode position.
type HEVCRefs struct {
	log2MaxPocLsb int
	pics          []hevcPic
	has           []bool // the packet holds a picture (a VCL NAL unit)
}

// hevcPic is one access unit (packet) as the reference analysis sees it.
type hevcPic struct {
	typ, tid      uint8 // nal_unit_type and TemporalId of its slices
	pocLsb        int32
	noOutputPrior bool    // an IRAP picture's no_output_of_prior_pics_flag
	st            hevcRPS // short-term reference picture set (empty for IDR pictures)
	lt            []hevcLT
	slices        []hevcSlice // the independent slice segments' lists
	pinned        bool        // the packet carries parameter sets: always sent
	disp          bool        // a sub-layer non-reference picture at the top sub-layer (HEVCDisposable)
}

// HEVCCollector builds HEVCRefs during the index scan.
type HEVCCollector struct {
	lenSize, maxTid int
	params          hevcParams
	sps             hevcSPS
	spsSet          bool
	refs            HEVCRefs
	off             bool
}

// NewHEVCCollector starts the analysis from the stream's hvcC box; nil without one (raw Annex-B HEVC,
// MPEG-TS: decode drops nothing there, so nothing would be left out, and reading start codes would copy
// every packet whole) and for a length size of 3 (FFmpeg reads such packets another way).
func NewHEVCCollector(extradata []byte) *HEVCCollector {
	n, maxTid := HEVCConfig(extradata)
	if n <= 0 || n == 3 {
		return nil
	}
	c := &HEVCCollector{lenSize: n, maxTid: maxTid, params: hevcParams{sps: map[int]hevcSPS{}, pps: map[int]hevcPPS{}}}
	for _, nal := range hvccNALs(extradata) {
		if len(nal) >= 2 && c.paramSet(nal) != nil {
			c.off = true
		}
	}
	return c
}

// hvccNALs lists the NAL units of an hvcC box's arrays (ISO/IEC 14496-15 §8.3.3.1).
func hvccNALs(b []byte) [][]byte {
	var out [][]byte
	if len(b) < 23 || b[0] != 1 {
		return nil
	}
	i, arrays := 23, int(b[22])
	for a := 0; a < arrays; a++ {
		if i+3 > len(b) {
			return out
		}
		n := int(b[i+1])<<8 | int(b[i+2])
		var ok bool
		if out, i, ok = sizedNALs(b, i+3, n, out); !ok {
			return out
		}
	}
	return out
}

// paramSet records a VPS, SPS or PPS (layer 0). Every SPS must read as the first one did: a stream
// whose sequence parameters change (FFmpeg then starts a new sequence) is outside the model.
func (c *HEVCCollector) paramSet(nal []byte) error {
	switch nal[0] >> 1 & 0x3f {
	case 33:
		id, s, err := parseHEVCSPS(nal)
		if err != nil {
			return err
		}
		if c.spsSet && !s.equal(&c.sps) {
			return errHEVCUnsupported
		}
		c.params.sps[id], c.sps, c.spsSet = s, s, true
		c.refs.log2MaxPocLsb = s.log2MaxPocLsb
	case 34:
		id, p, err := parseHEVCPPS(nal)
		if err != nil {
			return err
		}
		c.params.pps[id] = p
	}
	return nil
}

// Add reads the next packet (its view; whole gives the whole packet when the view is cut short).
func (c *HEVCCollector) Add(pv View, whole func() View) {
	if c.off {
		return
	}
	pic, has, err := c.picture(pv)
	if err == errH264Short && len(pv.Head) < pv.Size {
		pv = whole()
		pic, has, err = c.picture(pv)
	}
	if err != nil {
		c.off = true
		return
	}
	if has && c.lenSize > 0 && c.maxTid >= 0 { // decode's non-reference drop (disposableFunc)
		d, known := HEVCDisposable(pv, c.lenSize, c.maxTid)
		if !known {
			d, _ = HEVCDisposable(whole(), c.lenSize, c.maxTid)
		}
		pic.disp = d
	}
	c.refs.pics = append(c.refs.pics, pic)
	c.refs.has = append(c.refs.has, has)
}

// picture reads one packet's NAL units: parameter sets, then the slice segments of one picture.
func (c *HEVCCollector) picture(pv View) (hevcPic, bool, error) {
	var pic hevcPic
	var err error
	lenSize, known := hevcFraming(pv, c.lenSize)
	if !known {
		return pic, false, errH264Short
	}
	vcl := 0
	ok, known := eachNALIn(pv, lenSize, func(nal []byte) bool {
		if len(nal) < 2 || nal[0]&0x80 != 0 || (nal[0]&1)<<5|nal[1]>>3 != 0 || nal[1]&7 == 0 {
			err = errHEVCUnsupported // forbidden bit, another layer, TemporalId + 1 = 0
			return false
		}
		typ, tid := nal[0]>>1&0x3f, nal[1]&7-1
		switch {
		case typ >= 32 && typ <= 34:
			pic.pinned = true
			if err = c.paramSet(nal); err != nil {
				return false
			}
		case typ == 36 || typ == 37: // end of sequence or bitstream: FFmpeg starts a new sequence
			err = errHEVCUnsupported
			return false
		case typ <= 9 || (typ >= 16 && typ <= 21):
			err = c.slice(nal, typ, tid, vcl, &pic)
			vcl++
			return err == nil
		case typ < 32: // reserved VCL types
			err = errHEVCUnsupported
			return false
		}
		return true
	})
	switch {
	case err != nil:
		return pic, false, err
	case !known:
		return pic, false, errH264Short
	case !ok:
		return pic, false, errHEVCUnsupported
	}
	return pic, vcl > 0, nil
}

// slice reads the k-th slice segment NAL unit of the packet into pic.
func (c *HEVCCollector) slice(nal []byte, typ, tid uint8, k int, pic *hevcPic) error {
	h, err := parseHEVCSlice(nal, typ, &c.params)
	switch {
	case err != nil:
		return err
	case k == 0 && !h.first, k > 0 && (h.first || typ != pic.typ || tid != pic.tid):
		return errHEVCUnsupported // a picture split over packets, two in one, or slices that disagree
	case h.dependent:
		return nil
	case k == 0:
		pic.typ, pic.tid, pic.pocLsb, pic.noOutputPrior, pic.st, pic.lt = typ, tid, h.pocLsb, h.noOutputPrior, h.st, h.lt
	case h.pocLsb != pic.pocLsb || !h.st.equal(&pic.st) || !slices.Equal(h.lt, pic.lt):
		return errHEVCUnsupported // FFmpeg builds every slice's lists from the first slice's set
	}
	pic.slices = append(pic.slices, h.slice)
	return nil
}

// Result is the stream's analysis, or nil when it is off or the packets do not line up.
func (c *HEVCCollector) Result(packets int) *HEVCRefs {
	if c == nil || c.off || !c.spsSet || len(c.refs.pics) != packets {
		return nil
	}
	return &c.refs
}
