package h26x

import (
	"math"
	"slices"
)

// A model of FFmpeg 5.1's HEVC reference handling (hevcrefs.go says why). It follows libavcodec:
// hls_slice_header (sequences at IDR/BLA pictures, POC, prevTid0Pic), decode_nal_unit (RASL pictures
// skipped after a CRA the decoder started at: max_ra), ff_hevc_frame_rps (the reference picture set
// looked up by POC, a missing picture made up) and ff_hevc_slice_rpl (the active lists).

// hevcFrame is a picture a look-up can find: decoded (its decode position) or made up for a missing
// reference (a negative id).
type hevcFrame struct {
	id  int32
	poc int32
}

// hevcOut is what one picture got: its POC, whether FFmpeg skipped it (a RASL picture of the CRA it
// started at), and per slice its active entries (list 0, -1, list 1, -1).
type hevcOut struct {
	poc     int32
	skipped bool
	refs    []int32
}

func (o *hevcOut) equal(p *hevcOut) bool {
	return o.poc == p.poc && o.skipped == p.skipped && slices.Equal(o.refs, p.refs)
}

// FFmpeg's max_ra sentinels: INT_MAX (the next CRA sets it), INT_MIN (no RASL picture is skipped).
const (
	raUnset = int64(math.MaxInt32)
	raNone  = int64(math.MinInt32)
)

// hevcSim replays a decode from a fresh decoder.
type hevcSim struct {
	h       *HEVCRefs
	frames  []hevcFrame    // what the next picture's look-ups find: the last picture's references and itself
	gone    map[int32]bool // POCs of this sequence's decoded pictures no longer referenced
	pocTid0 int32          // the POC of prevTid0Pic
	maxRA   int64
	started bool
	nextGen int32
	bad     bool // FFmpeg would fail, or its output timing could decide a look-up
}

func newHEVCSim(h *HEVCRefs) *hevcSim {
	return &hevcSim{h: h, gone: map[int32]bool{}, maxRA: raUnset, nextGen: -2} // -1 separates lists
}

// hevcPOC is ff_hevc_compute_poc: the POC from its LSBs and prevTid0Pic's POC (8-1; C's remainder).
func hevcPOC(pocTid0, lsb, maxLsb int32, typ uint8) int32 {
	prevLsb := pocTid0 % maxLsb
	msb := pocTid0 - prevLsb
	switch {
	case lsb < prevLsb && prevLsb-lsb >= maxLsb/2:
		msb += maxLsb
	case lsb > prevLsb && lsb-prevLsb > maxLsb/2:
		msb -= maxLsb
	}
	if isBLA(typ) {
		msb = 0
	}
	return msb + lsb
}

// decode is picture d through the decoder.
func (s *hevcSim) decode(d int) hevcOut {
	p := &s.h.pics[d]
	var out hevcOut
	if !s.started && !isIRAP(p.typ) {
		s.bad = true // a fresh decoder must start at an IRAP picture
		return out
	}
	if s.started && isIRAP(p.typ) && p.noOutputPrior {
		s.bad = true // the pictures waiting for output are dropped: which ones depends on what was sent
	}
	s.started = true
	if isIDR(p.typ) || isBLA(p.typ) { // a new sequence: nothing before it can be found
		s.frames, s.gone, s.maxRA = s.frames[:0], map[int32]bool{}, raUnset
	}
	maxLsb := int32(1) << s.h.log2MaxPocLsb
	if !isIDR(p.typ) {
		out.poc = hevcPOC(s.pocTid0, p.pocLsb, maxLsb, p.typ)
	}
	if p.tid == 0 && !(p.typ <= 9 && (p.typ%2 == 0 || p.typ == 7 || p.typ == 9)) {
		s.pocTid0 = out.poc // not a sub-layer non-reference, RADL or RASL picture
	}
	if s.maxRA == raUnset {
		switch {
		case isCRA(p.typ) || isBLA(p.typ):
			s.maxRA = int64(out.poc)
		case isIDR(p.typ):
			s.maxRA = raNone
		}
	}
	if isRASL(p.typ) && int64(out.poc) <= s.maxRA {
		out.skipped = true
		return out
	}
	if p.typ == 9 && int64(out.poc) > s.maxRA {
		s.maxRA = raNone
	}
	if s.find(out.poc, -1) >= 0 || s.gone[out.poc] {
		s.bad = true // "Duplicate POC in a sequence"
	}
	var sets [3][]hevcFrame // StCurrBefore, StCurrAfter, LtCurr
	var keep []hevcFrame
	if !isIDR(p.typ) { // an IDR picture has no set: the references were cleared
		sets, keep = s.lookUp(p, out.poc, maxLsb)
	}
	for i := range p.slices {
		out.refs = s.lists(out.refs, &p.slices[i], &sets)
	}
	for _, f := range s.frames {
		if f.id >= 0 && !slices.Contains(keep, f) {
			s.gone[f.poc] = true // released, or held until output: FFmpeg could still find it
		}
	}
	s.frames = append(keep, hevcFrame{id: int32(d), poc: out.poc})
	return out
}

// lookUp is ff_hevc_frame_rps: each entry of the picture's sets found by POC (all bits for short-term
// entries and long-term ones with their MSBs, the LSBs for the others) or made up. It returns the
// entries the picture may use and every picture the sets keep.
func (s *hevcSim) lookUp(p *hevcPic, poc, maxLsb int32) (sets [3][]hevcFrame, keep []hevcFrame) {
	add := func(target, mask int32, used bool, set int) {
		if poc&mask == target {
			s.bad = true // the current picture in its own set
		}
		i := s.find(target, mask)
		var f hevcFrame
		if i >= 0 {
			f = s.frames[i]
		} else {
			if s.gone[target] || (mask != -1 && s.goneLSB(target, mask)) {
				s.bad = true // FFmpeg finds it if it waits for output: its output timing decides
			}
			f = hevcFrame{id: s.nextGen, poc: target} // made up (generate_missing_ref)
			s.nextGen--
			s.frames = append(s.frames, f)
		}
		if !slices.Contains(keep, f) {
			keep = append(keep, f)
		}
		if used {
			sets[set] = append(sets[set], f)
		}
	}
	for i, dlt := range p.st.delta {
		set := 0
		if i >= p.st.nNeg {
			set = 1
		}
		add(poc+dlt, -1, p.st.used[i], set)
	}
	for _, e := range p.lt {
		if !e.msb {
			add(e.lsb, maxLsb-1, e.used, 2)
			continue
		}
		v := int64(e.lsb) + int64(poc) - e.deltaMsb*int64(maxLsb) - int64(p.pocLsb)
		if v != int64(int32(v)) {
			s.bad = true
			continue
		}
		add(int32(v), -1, e.used, 2)
	}
	return sets, keep
}

// goneLSB reports whether a released picture's POC has the LSBs target (a long-term entry without MSBs).
func (s *hevcSim) goneLSB(target, mask int32) bool {
	for g := range s.gone {
		if g&mask == target {
			return true
		}
	}
	return false
}

// find returns the index of the one frame whose POC (masked) is target, or -1. Two candidates would
// leave the choice to FFmpeg's buffer order: not modelled.
func (s *hevcSim) find(target, mask int32) int {
	at := -1
	for i, f := range s.frames {
		if f.poc&mask == target {
			if at >= 0 {
				s.bad = true
			}
			at = i
		}
	}
	return at
}

// lists appends one slice's active entries (ff_hevc_slice_rpl) to refs.
func (s *hevcSim) lists(refs []int32, sl *hevcSlice, sets *[3][]hevcFrame) []int32 {
	if sl.typ == 'I' {
		return refs
	}
	lists := 1
	if sl.typ == 'B' {
		lists = 2
	}
	total := len(sets[0]) + len(sets[1]) + len(sets[2])
	if total == 0 {
		s.bad = true // "Zero refs in the frame RPS"
		return refs
	}
	for l := 0; l < lists; l++ {
		order := [3]int{0, 1, 2}
		if l == 1 {
			order = [3]int{1, 0, 2}
		}
		var tmp []hevcFrame
		for len(tmp) < sl.n[l] {
			for _, k := range order {
				for _, f := range sets[k] {
					if len(tmp) < 16 {
						tmp = append(tmp, f)
					}
				}
			}
		}
		for i := 0; i < sl.n[l]; i++ {
			k := i
			if sl.mods[l] != nil {
				k = int(sl.mods[l][i])
			}
			if k >= len(tmp) {
				s.bad = true // "Invalid reference index"
				refs = append(refs, noRef)
				continue
			}
			refs = append(refs, tmp[k].id)
		}
		refs = append(refs, -1)
	}
	return refs
}

// play simulates the decode of the fed pictures of [key, end] and returns what each got, and the
// picture at which the model stopped (-1: none); budget counts the pictures simulated.
func (h *HEVCRefs) play(key, end int, feed []bool, budget *int) (map[int]hevcOut, int) {
	s := newHEVCSim(h)
	outs := make(map[int]hevcOut, end-key+1)
	for d := key; d <= end; d++ {
		if !feed[d-key] || !h.has[d] {
			continue
		}
		*budget--
		outs[d] = s.decode(d)
		if s.bad {
			return outs, d
		}
	}
	return outs, -1
}

// LeaveOut returns the reference pictures in the segment [key, end] that the frames at the decode
// positions marked in need do not use, directly or through other pictures, and whose absence leaves
// every decoded picture as it is in the decode of every packet (checked by the model): by decode
// position, ascending. The sub-layer non-reference pictures decode already leaves out (disp) are
// neither sent nor listed. nil when there are none, or when the segment does not start at an IRAP
// picture or the model finds anything it does not cover.
func (h *HEVCRefs) LeaveOut(key, end int, need []bool) []int {
	if key < 0 || end >= len(h.pics) || key > end || len(need) < len(h.pics) || !h.has[key] || !isIRAP(h.pics[key].typ) {
		return nil
	}
	budget := maxSimPictures
	all := make([]bool, end-key+1)
	for i := range all {
		all[i] = true
	}
	full, stop := h.play(key, end, all, &budget)
	if stop >= 0 {
		return nil
	}
	for _, o := range full {
		if slices.ContainsFunc(o.refs, func(id int32) bool { return id < -1 }) {
			return nil // a decoded picture uses a missing reference: the stream is damaged here
		}
	}
	feed := make([]bool, end-key+1)
	for d := key; d <= end; d++ {
		if d == key || need[d] || h.pics[d].pinned {
			if !h.takeBack(feed, key, d, need, full) {
				return nil
			}
		}
	}
	for tries := 0; ; tries++ {
		got, bad := h.play(key, end, feed, &budget)
		for d := key; d <= end && bad < 0; d++ {
			if g, fed := got[d]; fed {
				if want := full[d]; !g.equal(&want) {
					bad = d
				}
			}
		}
		if bad < 0 {
			break
		}
		if tries >= maxTakeBacks || budget <= 0 || !h.takeBackFor(feed, key, bad, got, full, need) {
			return nil
		}
	}
	var out []int
	for d := key; d <= end; d++ {
		if h.has[d] && !feed[d-key] && !h.pics[d].disp {
			out = append(out, d)
		}
	}
	return out
}

// takeBackFor feeds what picture bad needs to decode as in the full decode: the pictures its lists
// name there and not here, else the latest picture left out before it.
func (h *HEVCRefs) takeBackFor(feed []bool, key, bad int, got, full map[int]hevcOut, need []bool) bool {
	g, w := got[bad], full[bad]
	took := false
	for i, id := range w.refs {
		if id >= int32(key) && (i >= len(g.refs) || g.refs[i] != id) && !feed[int(id)-key] {
			if !h.takeBack(feed, key, int(id), need, full) {
				return false
			}
			took = true
		}
	}
	if took {
		return true
	}
	for d := bad - 1; d >= key; d-- {
		if h.has[d] && !feed[d-key] && !h.pics[d].disp {
			return h.takeBack(feed, key, d, need, full)
		}
	}
	return false
}

// takeBack marks picture d as sent, with the pictures it uses (transitively, in the full decode).
// false when one of them is a non-reference picture decode leaves out anyway: the stream breaks
// the sub-layer rule, and nothing more is left out.
func (h *HEVCRefs) takeBack(feed []bool, key, d int, need []bool, full map[int]hevcOut) bool {
	stack := []int{d}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if d < key || d-key >= len(feed) || feed[d-key] {
			continue
		}
		if h.pics[d].disp && !need[d] && h.has[d] {
			return false
		}
		feed[d-key] = true
		for _, id := range full[d].refs {
			if id >= int32(key) && !feed[int(id)-key] {
				stack = append(stack, int(id))
			}
		}
	}
	return true
}
