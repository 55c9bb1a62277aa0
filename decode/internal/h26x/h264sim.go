package h26x

// A model of FFmpeg 5.1's H.264 reference handling for progressive frames (h264refs.go says why).
// It follows libavcodec: h264_field_start (frame_num gaps), ff_h264_init_poc (POC type 0),
// h264_initialise_ref_list and ff_h264_build_ref_list (h264_refs.c), ff_h264_execute_ref_pic_marking.

// dpbPic is a short-term reference picture in FFmpeg's short_ref list.
type dpbPic struct {
	id  int32 // decode position; negative: a picture FFmpeg made up to fill a frame_num gap
	fn  int32
	poc int64
	buf int32 // whose pixels it holds (a gap picture shares its predecessor's buffer)
	gap bool  // invalid_gap: a made-up picture in a stream that allows no gaps
}

// picRefs is what one decoded picture used: its POC and, per slice and list, the active entries.
type picRefs struct {
	poc  int64
	refs []int32 // ids; -1 between lists; noRef for an entry FFmpeg found missing
}

const noRef = int32(-1 << 30)

// refSim replays a decode of a segment that starts at an IDR picture.
type refSim struct {
	sps     h264SPS
	short   []dpbPic // most recent first
	prevFn  int32    // -1: nothing decoded yet
	prevMsb int64
	prevLsb int64
	nextGap int32
	bad     bool // FFmpeg would log an error (or the model is out of its depth)
}

func newRefSim(sps h264SPS) *refSim { return &refSim{sps: sps, prevFn: -1, nextGap: -1} }

func (s *refSim) maxFn() int32 { return 1 << s.sps.log2MaxFrameNum }

// decode is one picture through the decoder; it returns what the picture used.
func (s *refSim) decode(d int, p *h264Pic) picRefs {
	if p.idr {
		s.short, s.prevFn, s.prevMsb, s.prevLsb = s.short[:0], 0, 1<<16, -1
	} else if s.prevFn < 0 {
		s.bad = true // the model needs a known DPB: segments start at IDR pictures
		return picRefs{}
	} else {
		s.fillGap(p.frameNum)
	}
	// POC type 0 (ff_h264_init_poc).
	lsb, maxLsb := int64(p.pocLsb), int64(1)<<s.sps.log2MaxPocLsb
	if s.prevLsb < 0 {
		s.prevLsb = lsb
	}
	msb := s.prevMsb
	switch {
	case lsb < s.prevLsb && s.prevLsb-lsb >= maxLsb/2:
		msb += maxLsb
	case lsb > s.prevLsb && s.prevLsb-lsb < -maxLsb/2:
		msb -= maxLsb
	}
	out := picRefs{poc: msb + lsb}
	for i := range p.slices {
		out.refs = s.lists(out.refs, &p.slices[i], p.frameNum, out.poc)
	}
	if p.ref {
		var ops []int32
		if p.adaptive {
			ops = make([]int32, len(p.mmco))
			for i, diff := range p.mmco {
				ops[i] = (p.frameNum - diff - 1) & (s.maxFn() - 1)
			}
		}
		s.mark(dpbPic{id: int32(d), fn: p.frameNum, poc: out.poc, buf: int32(d)}, p.adaptive, ops)
		s.prevMsb, s.prevLsb = msb, lsb
	}
	s.prevFn = p.frameNum
	return out
}

// fillGap makes up the pictures of a frame_num gap before frame_num fn (h264_field_start).
func (s *refSim) fillGap(fn int32) {
	maxFn, r := s.maxFn(), int32(s.sps.maxRefFrames)
	if fn != s.prevFn {
		unwrapped := s.prevFn
		if unwrapped > fn {
			unwrapped -= maxFn
		}
		if fn-unwrapped > r { // "shorten frame num gaps"
			s.prevFn = ((fn-r-1)%maxFn + maxFn) % maxFn
		}
	}
	for fn != s.prevFn && fn != (s.prevFn+1)%maxFn {
		if len(s.short) == 0 {
			s.bad = true // FFmpeg would paint a grey picture: not modelled
			return
		}
		prev := s.short[0]
		s.prevFn = (s.prevFn + 1) % maxFn
		g := dpbPic{id: s.nextGap, fn: s.prevFn, buf: s.nextGap, gap: !s.sps.gapsAllowed}
		s.nextGap--
		s.mark(g, false, nil)
		if len(s.short) > 0 { // error concealment: the previous reference's pixels, POC + 2
			s.short[0].buf, s.short[0].poc, s.short[0].fn = prev.buf, prev.poc+2, s.prevFn
		}
	}
}

// mark is ff_h264_execute_ref_pic_marking for the current picture cur: the sliding window, or the
// picture's MMCO 1 operations (the picture numbers to unmark), then cur as the newest short-term
// reference.
func (s *refSim) mark(cur dpbPic, adaptive bool, unmark []int32) {
	r := s.sps.maxRefFrames
	if !adaptive && len(s.short) > 0 && len(s.short) >= r {
		unmark = []int32{s.short[len(s.short)-1].fn}
	}
	for _, fn := range unmark {
		if i := s.find(fn); i >= 0 {
			s.short = append(s.short[:i], s.short[i+1:]...)
		} else if len(s.short) > 0 {
			s.bad = true // "mmco: unref short failure"
		}
	}
	if i := s.find(cur.fn); i >= 0 {
		s.bad = true // "illegal short term buffer state detected"
		s.short = append(s.short[:i], s.short[i+1:]...)
	}
	s.short = append([]dpbPic{cur}, s.short...)
	if len(s.short) > max(r, 1) {
		s.bad = true // "number of reference frames exceeds max"
		s.short = s.short[:len(s.short)-1]
	}
	maxFn := s.maxFn()
	for i := 0; i < len(s.short); i++ { // as FFmpeg's loop: a removal skips the next entry
		if e := s.short[i]; e.gap && ((cur.fn-e.fn)%maxFn+maxFn)%maxFn > int32(r) {
			s.short = append(s.short[:i], s.short[i+1:]...)
		}
	}
}

// find is find_short: the most recent short-term picture with frame_num fn, or -1.
func (s *refSim) find(fn int32) int {
	for i, e := range s.short {
		if e.fn == fn {
			return i
		}
	}
	return -1
}

// lists appends one slice's active reference entries (list 0, -1, list 1, -1) to refs.
func (s *refSim) lists(refs []int32, sl *h264Slice, fn int32, poc int64) []int32 {
	var init [2][]dpbPic
	switch sl.typ {
	case 'I':
		return refs
	case 'P':
		init[0] = s.short
	case 'B':
		for l := 0; l < 2; l++ {
			init[l] = append(s.addSorted(poc, 1^l), s.addSorted(poc, l)...)
		}
		if len(init[0]) == len(init[1]) && len(init[1]) > 1 {
			same := true
			for i := range init[0] {
				same = same && init[0][i].buf == init[1][i].buf
			}
			if same {
				init[1] = slices0Swap(init[1])
			}
		}
	}
	for l := 0; l < 2; l++ {
		n := sl.n[l]
		if n == 0 {
			continue
		}
		list := make([]*dpbPic, n)
		for i := 0; i < n && i < len(init[l]); i++ {
			list[i] = &init[l][i]
		}
		s.modify(list, sl.mods[l], fn)
		for _, e := range list {
			if e == nil {
				s.bad = true // "Missing reference picture"
				refs = append(refs, noRef)
				continue
			}
			refs = append(refs, e.id)
		}
		refs = append(refs, -1)
	}
	return refs
}

func slices0Swap(l []dpbPic) []dpbPic {
	l = append([]dpbPic(nil), l...)
	l[0], l[1] = l[1], l[0]
	return l
}

// addSorted is h264_refs.c's add_sorted: the short-term pictures with POC ≤ limit in descending order
// (dir 1) or > limit in ascending order (dir 0), one per POC value.
func (s *refSim) addSorted(limit int64, dir int) []dpbPic {
	var out []dpbPic
	for {
		var best int64 = 1 << 62
		if dir == 1 {
			best = -best
		}
		pick := -1
		for i, e := range s.short {
			if (e.poc > limit) != (dir == 1) && (e.poc < best) != (dir == 1) {
				best, pick = e.poc, i
			}
		}
		if pick < 0 {
			return out
		}
		out = append(out, s.short[pick])
		limit = s.short[pick].poc - int64(dir)
	}
}

// modify applies ref_pic_list_modification to the active window of a list (ff_h264_build_ref_list).
func (s *refSim) modify(list []*dpbPic, mods []h264Mod, fn int32) {
	pred, mask := fn, s.maxFn()-1
	for index, m := range mods {
		if m.idc == 0 {
			pred -= m.val + 1
		} else {
			pred += m.val + 1
		}
		pred &= mask
		var ref *dpbPic
		for i := len(s.short) - 1; i >= 0; i-- { // FFmpeg looks from the oldest
			if s.short[i].fn == pred {
				ref = &s.short[i]
				break
			}
		}
		if ref == nil || index >= len(list) {
			s.bad = true // "reference picture missing during reorder"
			if index < len(list) {
				list[index] = nil
			}
			continue
		}
		i := index
		for ; i+1 < len(list); i++ {
			if list[i] != nil && list[i].fn == pred {
				break
			}
		}
		for ; i > index; i-- {
			list[i] = list[i-1]
		}
		list[index] = ref
	}
}
