package h26x

import "errors"

// The H.264 syntax the reference analysis (h264refs.go) reads: sequence and picture parameter sets,
// and each slice header up to dec_ref_pic_marking (ITU-T H.264 §7.3.2.1, §7.3.2.2, §7.3.3). Anything
// the analysis does not model is reported as errH264Unsupported, and the stream is then decoded as
// before (every reference picture sent).

var (
	errH264Unsupported = errors.New("h264: a feature the reference analysis does not model")
	errH264Short       = errors.New("h264: header cut short")
)

// bitReader reads an RBSP: the NAL unit payload with its emulation prevention bytes removed.
type bitReader struct {
	b   []byte
	pos int // in bits
	err error
}

// newRBSP strips emulation prevention bytes (00 00 03) from nal's payload (after its header byte).
func newRBSP(nal []byte) *bitReader { return newRBSPHead(nal, 1, len(nal)) }

// newRBSPHead is newRBSP for a NAL unit header of hdr bytes (H.264: 1, HEVC: 2), reading at most the
// first limit bytes of the NAL unit: a slice header's syntax ends long before its slice data, which
// need not be copied (a read past the limit is errH264Short, as a read past the end).
func newRBSPHead(nal []byte, hdr, limit int) *bitReader {
	nal = nal[:min(len(nal), limit)]
	if len(nal) < hdr {
		return &bitReader{}
	}
	out := make([]byte, 0, len(nal))
	zeros := 0
	for _, c := range nal[hdr:] {
		if zeros >= 2 && c == 3 {
			zeros = 0
			continue
		}
		out = append(out, c)
		if c == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return &bitReader{b: out}
}

func (r *bitReader) u(n int) int {
	v := 0
	for ; n > 0; n-- {
		if r.pos>>3 >= len(r.b) {
			r.err = errH264Short
			return 0
		}
		v = v<<1 | int(r.b[r.pos>>3]>>(7-r.pos&7))&1
		r.pos++
	}
	return v
}

func (r *bitReader) flag() bool { return r.u(1) == 1 }

// ue is an Exp-Golomb code (§9.1); codes longer than 31 bits are refused.
func (r *bitReader) ue() int {
	zeros := 0
	for r.u(1) == 0 {
		if zeros++; zeros > 31 || r.err != nil {
			if r.err == nil {
				r.err = errH264Unsupported
			}
			return 0
		}
	}
	return 1<<zeros - 1 + r.u(zeros)
}

func (r *bitReader) se() int {
	k := r.ue()
	if k&1 == 1 {
		return (k + 1) / 2
	}
	return -k / 2
}

// h264SPS holds what the analysis needs of a sequence parameter set.
type h264SPS struct {
	chromaArrayType int
	separatePlanes  bool
	log2MaxFrameNum int
	pocType         int
	log2MaxPocLsb   int
	maxRefFrames    int
	gapsAllowed     bool
	frameMbsOnly    bool
}

var highProfiles = map[int]bool{100: true, 110: true, 122: true, 244: true, 44: true, 83: true, 86: true, 118: true, 128: true, 138: true, 139: true, 134: true, 135: true}

// parseH264SPS reads a sequence parameter set NAL unit (type 7). Field pictures, POC type 1 and
// separate colour planes are unsupported: the analysis models progressive frames only.
func parseH264SPS(nal []byte) (id int, s h264SPS, err error) {
	r := newRBSP(nal)
	profile := r.u(8)
	r.u(16) // constraint flags, level_idc
	id = r.ue()
	s.chromaArrayType = 1
	if highProfiles[profile] {
		cf := r.ue()
		if cf == 3 {
			s.separatePlanes = r.flag()
		}
		s.chromaArrayType = cf
		r.ue()        // bit_depth_luma_minus8
		r.ue()        // bit_depth_chroma_minus8
		r.u(1)        // qpprime_y_zero_transform_bypass_flag
		if r.flag() { // seq_scaling_matrix_present_flag
			lists := 8
			if cf == 3 {
				lists = 12
			}
			for i := 0; i < lists; i++ {
				if r.flag() {
					size := 16
					if i >= 6 {
						size = 64
					}
					skipScalingList(r, size)
				}
			}
		}
	}
	s.log2MaxFrameNum = r.ue() + 4
	s.pocType = r.ue()
	if s.pocType == 0 {
		s.log2MaxPocLsb = r.ue() + 4
	}
	if s.pocType == 1 {
		return id, s, errH264Unsupported
	}
	s.maxRefFrames = r.ue()
	s.gapsAllowed = r.flag()
	r.ue() // pic_width_in_mbs_minus1
	r.ue() // pic_height_in_map_units_minus1
	s.frameMbsOnly = r.flag()
	switch {
	case r.err != nil:
		return id, s, r.err
	case id > 31 || s.log2MaxFrameNum > 16 || s.log2MaxPocLsb > 16 || s.maxRefFrames > 16:
		return id, s, errH264Unsupported
	case !s.frameMbsOnly || s.separatePlanes:
		return id, s, errH264Unsupported
	}
	return id, s, nil
}

func skipScalingList(r *bitReader, size int) {
	last, next := 8, 8
	for j := 0; j < size && r.err == nil; j++ {
		if next != 0 {
			next = (last + r.se() + 256) % 256
		}
		if next != 0 {
			last = next
		}
	}
}

// h264PPS holds what the analysis needs of a picture parameter set.
type h264PPS struct {
	spsID               int
	bottomFieldPocInPPS bool
	numRefIdxDefault    [2]int
	weightedPred        bool
	weightedBipredIdc   int
	redundantPicCnt     bool
}

// parseH264PPS reads a picture parameter set NAL unit (type 8); slice groups (FMO) are unsupported.
func parseH264PPS(nal []byte) (id int, p h264PPS, err error) {
	r := newRBSP(nal)
	id = r.ue()
	p.spsID = r.ue()
	r.u(1) // entropy_coding_mode_flag
	p.bottomFieldPocInPPS = r.flag()
	if r.ue() != 0 { // num_slice_groups_minus1
		return id, p, errH264Unsupported
	}
	p.numRefIdxDefault[0] = r.ue() + 1
	p.numRefIdxDefault[1] = r.ue() + 1
	p.weightedPred = r.flag()
	p.weightedBipredIdc = r.u(2)
	r.se() // pic_init_qp_minus26
	r.se() // pic_init_qs_minus26
	r.se() // chroma_qp_index_offset
	r.u(1) // deblocking_filter_control_present_flag
	r.u(1) // constrained_intra_pred_flag
	p.redundantPicCnt = r.flag()
	switch {
	case r.err != nil:
		return id, p, r.err
	case id > 255 || p.spsID > 31 || p.numRefIdxDefault[0] > 32 || p.numRefIdxDefault[1] > 32:
		return id, p, errH264Unsupported
	}
	return id, p, nil
}

// h264Mod is one ref_pic_list_modification operation on short-term pictures: idc 0 subtracts, 1 adds
// abs_diff_pic_num_minus1 + 1 to the predicted picture number.
type h264Mod struct {
	idc, val int32
}

// h264Slice is one slice header's reference structure.
type h264Slice struct {
	typ  byte   // 'I', 'P' or 'B'
	n    [2]int // num_ref_idx_active (list 0, list 1)
	mods [2][]h264Mod
}

// h264Pic is one access unit (packet) as the reference analysis sees it.
type h264Pic struct {
	idr      bool
	ref      bool // nal_ref_idc != 0
	frameNum int32
	pocLsb   int32
	adaptive bool    // adaptive_ref_pic_marking_mode_flag: mmco below, else the sliding window
	mmco     []int32 // MMCO 1 (unmark a short-term picture) operations: difference_of_pic_nums_minus1
	slices   []h264Slice
}

// h264Params are the parameter sets seen so far, by id.
type h264Params struct {
	sps map[int]h264SPS
	pps map[int]h264PPS
}

// parseH264Slice reads a slice NAL unit's header (types 1 and 5) up to dec_ref_pic_marking. It
// returns the picture-level fields in pic (set from the first slice) and the slice's lists.
func parseH264Slice(nal []byte, ps *h264Params) (h264Pic, h264Slice, error) {
	var pic h264Pic
	var sl h264Slice
	refIdc, typ := int(nal[0]>>5&3), nal[0]&0x1f
	pic.idr, pic.ref = typ == 5, refIdc != 0
	r := newRBSP(nal)
	r.ue() // first_mb_in_slice
	st := r.ue()
	if st > 9 {
		return pic, sl, errH264Unsupported
	}
	switch st % 5 {
	case 0:
		sl.typ = 'P'
	case 1:
		sl.typ = 'B'
	case 2:
		sl.typ = 'I'
	default: // SP, SI
		return pic, sl, errH264Unsupported
	}
	pp, ok := ps.pps[r.ue()]
	if !ok {
		return pic, sl, errH264Unsupported
	}
	sp, ok := ps.sps[pp.spsID]
	if !ok || sp.pocType != 0 {
		return pic, sl, errH264Unsupported
	}
	pic.frameNum = int32(r.u(sp.log2MaxFrameNum))
	if pic.idr {
		r.ue() // idr_pic_id
	}
	pic.pocLsb = int32(r.u(sp.log2MaxPocLsb))
	if pp.bottomFieldPocInPPS {
		r.se() // delta_pic_order_cnt_bottom
	}
	if pp.redundantPicCnt && r.ue() != 0 {
		return pic, sl, errH264Unsupported // redundant slices: FFmpeg drops them
	}
	sl.n = pp.numRefIdxDefault
	if sl.typ == 'B' {
		r.u(1) // direct_spatial_mv_pred_flag
	}
	if sl.typ != 'I' && r.flag() { // num_ref_idx_active_override_flag
		sl.n[0] = r.ue() + 1
		if sl.typ == 'B' {
			sl.n[1] = r.ue() + 1
		}
	}
	switch sl.typ {
	case 'I':
		sl.n = [2]int{}
	case 'P':
		sl.n[1] = 0
	}
	if sl.n[0] > 16 || sl.n[1] > 16 {
		return pic, sl, errH264Unsupported
	}
	if err := readModifications(r, &sl); err != nil {
		return pic, sl, err
	}
	if (pp.weightedPred && sl.typ == 'P') || (pp.weightedBipredIdc == 1 && sl.typ == 'B') {
		skipPredWeightTable(r, &sl, sp.chromaArrayType)
	}
	if pic.ref {
		if err := readMarking(r, &pic); err != nil {
			return pic, sl, err
		}
	}
	if r.err != nil {
		return pic, sl, r.err
	}
	return pic, sl, nil
}

// readModifications reads ref_pic_list_modification (§7.3.3.1); long-term operations are unsupported.
func readModifications(r *bitReader, sl *h264Slice) error {
	lists := 0
	switch sl.typ {
	case 'P':
		lists = 1
	case 'B':
		lists = 2
	}
	for l := 0; l < lists; l++ {
		if !r.flag() {
			continue
		}
		for i := 0; ; i++ {
			idc := r.ue()
			if idc == 3 || r.err != nil {
				break
			}
			if idc > 1 || i >= sl.n[l] {
				return errH264Unsupported
			}
			sl.mods[l] = append(sl.mods[l], h264Mod{idc: int32(idc), val: int32(r.ue())})
		}
	}
	return r.err
}

// skipPredWeightTable reads past pred_weight_table (§7.3.3.2).
func skipPredWeightTable(r *bitReader, sl *h264Slice, chroma int) {
	r.ue() // luma_log2_weight_denom
	if chroma != 0 {
		r.ue() // chroma_log2_weight_denom
	}
	lists := 1
	if sl.typ == 'B' {
		lists = 2
	}
	for l := 0; l < lists; l++ {
		for i := 0; i < sl.n[l] && r.err == nil; i++ {
			if r.flag() {
				r.se()
				r.se()
			}
			if chroma != 0 && r.flag() {
				for j := 0; j < 4; j++ {
					r.se()
				}
			}
		}
	}
}

// readMarking reads dec_ref_pic_marking (§7.3.3.3). Only MMCO 1 (unmark a short-term picture) is
// modelled: long-term pictures and MMCO 5 are unsupported.
func readMarking(r *bitReader, pic *h264Pic) error {
	if pic.idr {
		r.u(1) // no_output_of_prior_pics_flag
		if r.flag() {
			return errH264Unsupported // long_term_reference_flag
		}
		return r.err
	}
	pic.adaptive = r.flag()
	if !pic.adaptive {
		return r.err
	}
	for i := 0; i < 66 && r.err == nil; i++ {
		switch op := r.ue(); op {
		case 0:
			return r.err
		case 1:
			pic.mmco = append(pic.mmco, int32(r.ue()))
		default:
			return errH264Unsupported
		}
	}
	if r.err != nil {
		return r.err
	}
	return errH264Unsupported
}
