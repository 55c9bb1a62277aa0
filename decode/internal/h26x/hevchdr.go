package h26x

import (
	"errors"
	"slices"
)

// The HEVC syntax the reference analysis (hevcrefs.go) reads: sequence and picture parameter sets up to
// what the slice headers depend on, and each slice segment header up to its reference picture list
// modification (ITU-T H.265 §7.3.2.2, §7.3.2.3, §7.3.6.1, §7.3.7). Anything it does not cover is
// errHEVCUnsupported, and the stream is then decoded as before.

var errHEVCUnsupported = errors.New("hevc: a feature the reference analysis does not model")

// hevcHeaderLimit bounds the bytes of a NAL unit read for its header: the longest slice segment header
// up to ref_pic_lists_modification (16 + 16 short-term entries, 32 long-term ones, 2 × 16 list entries)
// is under 800 bytes; parameter sets are read up to the fields used, which come before their VUI.
const hevcHeaderLimit = 1024

// hevcRPS is a short-term reference picture set in FFmpeg's order: the negative POC deltas, closest
// first, then the positive ones, ascending (hevc_ps.c ff_hevc_decode_short_term_rps).
type hevcRPS struct {
	delta []int32
	used  []bool
	nNeg  int
}

// hevcSPS holds what the analysis needs of a sequence parameter set.
type hevcSPS struct {
	log2MaxPocLsb int
	chroma        int // chroma_format_idc
	ctbAddrBits   int // Ceil(Log2(PicSizeInCtbsY)): slice_segment_address
	sao           bool
	temporalMVP   bool
	ltPresent     bool
	ltLsb         []int32 // lt_ref_pic_poc_lsb_sps
	ltUsed        []bool
	rps           []hevcRPS
}

func (s *hevcSPS) equal(o *hevcSPS) bool {
	if s.log2MaxPocLsb != o.log2MaxPocLsb || s.chroma != o.chroma || s.ctbAddrBits != o.ctbAddrBits || s.sao != o.sao ||
		s.temporalMVP != o.temporalMVP || s.ltPresent != o.ltPresent || !slices.Equal(s.ltLsb, o.ltLsb) ||
		!slices.Equal(s.ltUsed, o.ltUsed) || len(s.rps) != len(o.rps) {
		return false
	}
	for i := range s.rps {
		if !s.rps[i].equal(&o.rps[i]) {
			return false
		}
	}
	return true
}

func (r *hevcRPS) equal(o *hevcRPS) bool {
	return r.nNeg == o.nNeg && slices.Equal(r.delta, o.delta) && slices.Equal(r.used, o.used)
}

// ceilLog2 is Ceil(Log2(n)) for n ≥ 1 (0 for n ≤ 1).
func ceilLog2(n int) int {
	b := 0
	for 1<<b < n {
		b++
	}
	return b
}

// skipProfileTierLevel reads past profile_tier_level(1, maxSubLayersMinus1) (§7.3.3).
func skipProfileTierLevel(r *bitReader, maxSubLayersMinus1 int) {
	r.u(32)
	r.u(32)
	r.u(32) // general profile, compatibility flags, constraint flags, level: 96 bits
	profile := make([]bool, maxSubLayersMinus1)
	level := make([]bool, maxSubLayersMinus1)
	for i := 0; i < maxSubLayersMinus1; i++ {
		profile[i], level[i] = r.flag(), r.flag()
	}
	if maxSubLayersMinus1 > 0 {
		r.u(2 * (8 - maxSubLayersMinus1)) // reserved_zero_2bits
	}
	for i := 0; i < maxSubLayersMinus1; i++ {
		if profile[i] {
			r.u(32)
			r.u(32)
			r.u(24) // sub-layer profile: 88 bits
		}
		if level[i] {
			r.u(8)
		}
	}
}

// skipHEVCScalingList reads past scaling_list_data() (§7.3.4).
func skipHEVCScalingList(r *bitReader) {
	for size := 0; size < 4; size++ {
		step := 1
		if size == 3 {
			step = 3
		}
		for m := 0; m < 6 && r.err == nil; m += step {
			if !r.flag() { // scaling_list_pred_mode_flag
				r.ue()
				continue
			}
			if size > 1 {
				r.se() // scaling_list_dc_coef_minus8
			}
			for i := 0; i < min(64, 1<<(4+size<<1)) && r.err == nil; i++ {
				r.se()
			}
		}
	}
}

// parseHEVCSPS reads a sequence parameter set NAL unit (type 33) up to sps_temporal_mvp_enabled_flag.
// Separate colour planes are unsupported (FFmpeg 5.1 decodes no such stream).
func parseHEVCSPS(nal []byte) (id int, s hevcSPS, err error) {
	r := newRBSPHead(nal, 2, hevcHeaderLimit)
	r.u(4) // sps_video_parameter_set_id
	maxSub := r.u(3)
	r.u(1) // sps_temporal_id_nesting_flag
	skipProfileTierLevel(r, maxSub)
	id = r.ue()
	s.chroma = r.ue()
	if s.chroma == 3 && r.flag() {
		return id, s, errHEVCUnsupported // separate_colour_plane_flag
	}
	w, h := r.ue(), r.ue()
	if r.flag() { // conformance_window_flag
		r.ue()
		r.ue()
		r.ue()
		r.ue()
	}
	r.ue() // bit_depth_luma_minus8
	r.ue() // bit_depth_chroma_minus8
	s.log2MaxPocLsb = r.ue() + 4
	first := maxSub
	if r.flag() { // sps_sub_layer_ordering_info_present_flag
		first = 0
	}
	for i := first; i <= maxSub; i++ {
		r.ue() // sps_max_dec_pic_buffering_minus1
		r.ue() // sps_max_num_reorder_pics
		r.ue() // sps_max_latency_increase_plus1
	}
	minCb := r.ue() + 3
	ctb := minCb + r.ue()
	r.ue()                    // log2_min_luma_transform_block_size_minus2
	r.ue()                    // log2_diff_max_min_luma_transform_block_size
	r.ue()                    // max_transform_hierarchy_depth_inter
	r.ue()                    // max_transform_hierarchy_depth_intra
	if r.flag() && r.flag() { // scaling_list_enabled_flag, sps_scaling_list_data_present_flag
		skipHEVCScalingList(r)
	}
	r.u(1) // amp_enabled_flag
	s.sao = r.flag()
	if r.flag() { // pcm_enabled_flag
		r.u(8)
		r.ue()
		r.ue()
		r.u(1)
	}
	if r.err != nil {
		return id, s, r.err
	}
	if id > 15 || s.log2MaxPocLsb > 16 || ctb < 4 || ctb > 6 || w <= 0 || h <= 0 || w > 1<<16 || h > 1<<16 {
		return id, s, errHEVCUnsupported
	}
	ctbs := ((w + 1<<ctb - 1) >> ctb) * ((h + 1<<ctb - 1) >> ctb)
	s.ctbAddrBits = ceilLog2(ctbs)
	n := r.ue() // num_short_term_ref_pic_sets
	if n > 64 {
		return id, s, errHEVCUnsupported
	}
	for i := 0; i < n && r.err == nil; i++ {
		rps, err := readShortTermRPS(r, s.rps, i, false)
		if err != nil {
			return id, s, err
		}
		s.rps = append(s.rps, rps)
	}
	s.ltPresent = r.flag()
	if s.ltPresent {
		k := r.ue()
		if k > 32 {
			return id, s, errHEVCUnsupported
		}
		for i := 0; i < k && r.err == nil; i++ {
			s.ltLsb = append(s.ltLsb, int32(r.u(s.log2MaxPocLsb)))
			s.ltUsed = append(s.ltUsed, r.flag())
		}
	}
	s.temporalMVP = r.flag()
	return id, s, r.err
}

// readShortTermRPS reads st_ref_pic_set(idx) (§7.3.7) from the SPS (sets holds those before it) or
// from a slice header (inSlice, idx = num_short_term_ref_pic_sets), derived as FFmpeg derives it: a
// predicted set's deltas sorted ascending, the negative ones then reversed.
func readShortTermRPS(r *bitReader, sets []hevcRPS, idx int, inSlice bool) (hevcRPS, error) {
	var out hevcRPS
	if idx != 0 && r.flag() { // inter_ref_pic_set_prediction_flag
		ref := idx - 1
		if inSlice {
			d := r.ue() + 1 // delta_idx_minus1
			if d > idx {
				return out, errHEVCUnsupported
			}
			ref = idx - d
		}
		sign := r.u(1)
		abs := r.ue() + 1
		if abs > 32768 {
			return out, errHEVCUnsupported
		}
		deltaRps := int32((1 - 2*sign) * abs)
		base := &sets[ref]
		type entry struct {
			d    int32
			used bool
		}
		var es []entry
		for j := 0; j <= len(base.delta); j++ {
			used := r.flag()
			if !used && !r.flag() { // use_delta_flag
				continue
			}
			d := deltaRps
			if j < len(base.delta) {
				d += base.delta[j]
			}
			if d == 0 {
				return out, errHEVCUnsupported // the current picture in its own set: FFmpeg's error
			}
			es = append(es, entry{d, used})
		}
		slices.SortStableFunc(es, func(a, b entry) int { return int(a.d - b.d) })
		for _, e := range es {
			if e.d < 0 {
				out.nNeg++
			}
		}
		slices.Reverse(es[:out.nNeg])
		for _, e := range es {
			out.delta = append(out.delta, e.d)
			out.used = append(out.used, e.used)
		}
	} else {
		neg, pos := r.ue(), r.ue()
		if neg >= 16 || pos >= 16 {
			return out, errHEVCUnsupported
		}
		out.nNeg = neg
		for k, sign := range []int32{-1, 1} {
			prev := int32(0)
			for i := 0; i < []int{neg, pos}[k]; i++ {
				d := int32(r.ue() + 1)
				if d > 32768 {
					return out, errHEVCUnsupported
				}
				prev += sign * d
				out.delta = append(out.delta, prev)
				out.used = append(out.used, r.flag())
			}
		}
	}
	if len(out.delta) >= 32 {
		return out, errHEVCUnsupported
	}
	return out, r.err
}

// hevcPPS holds what the analysis needs of a picture parameter set.
type hevcPPS struct {
	spsID             int
	dependentSlices   bool
	outputFlag        bool
	extraBits         int
	numRefIdxDefault  [2]int
	listsModification bool
}

// parsePPS reads a picture parameter set NAL unit (type 34) up to its extension flags. The screen
// content extension (the current picture as a reference) is unsupported.
func parseHEVCPPS(nal []byte) (id int, p hevcPPS, err error) {
	r := newRBSPHead(nal, 2, hevcHeaderLimit)
	id = r.ue()
	p.spsID = r.ue()
	p.dependentSlices = r.flag()
	p.outputFlag = r.flag()
	p.extraBits = r.u(3)
	r.u(2) // sign_data_hiding_enabled_flag, cabac_init_present_flag
	p.numRefIdxDefault = [2]int{r.ue() + 1, r.ue() + 1}
	r.se() // init_qp_minus26
	r.u(2) // constrained_intra_pred_flag, transform_skip_enabled_flag
	if r.flag() {
		r.ue() // diff_cu_qp_delta_depth
	}
	r.se()
	r.se()
	r.u(4) // slice chroma qp offsets, weighted pred, weighted bipred, transquant bypass
	tiles := r.flag()
	r.u(1) // entropy_coding_sync_enabled_flag
	if tiles {
		cols, rows := r.ue(), r.ue()
		if cols > 64 || rows > 64 {
			return id, p, errHEVCUnsupported
		}
		if !r.flag() { // uniform_spacing_flag
			for i := 0; i < cols+rows; i++ {
				r.ue()
			}
		}
		r.u(1)
	}
	r.u(1)        // pps_loop_filter_across_slices_enabled_flag
	if r.flag() { // deblocking_filter_control_present_flag
		r.u(1)
		if !r.flag() {
			r.se()
			r.se()
		}
	}
	if r.flag() {
		skipHEVCScalingList(r)
	}
	p.listsModification = r.flag()
	r.ue()                         // log2_parallel_merge_level_minus2
	r.u(1)                         // slice_segment_header_extension_present_flag
	if r.flag() && r.u(4)&1 != 0 { // pps_extension_present_flag; range, multilayer, 3d, scc
		return id, p, errHEVCUnsupported
	}
	switch {
	case r.err != nil:
		return id, p, r.err
	case id > 63 || p.spsID > 15 || p.numRefIdxDefault[0] > 15 || p.numRefIdxDefault[1] > 15:
		return id, p, errHEVCUnsupported
	}
	return id, p, nil
}

// hevcParams are the parameter sets seen so far, by id.
type hevcParams struct {
	sps map[int]hevcSPS
	pps map[int]hevcPPS
}

// hevcLT is a long-term reference entry of a slice header: the POC LSBs, or with msb the POC relative
// to the current picture's (poc = lsb + PicOrderCnt − deltaMsb·MaxLsb − slice_pic_order_cnt_lsb).
type hevcLT struct {
	lsb      int32
	deltaMsb int64
	msb      bool
	used     bool
}

// hevcSlice is one independent slice segment's reference lists: its type ('B', 'P', 'I'), the active
// entries per list and, when modified, list_entry_lX.
type hevcSlice struct {
	typ  byte
	n    [2]int
	mods [2][]uint8
}

// hevcSliceHeader is what a slice segment header says.
type hevcSliceHeader struct {
	first, dependent bool
	noOutputPrior    bool
	pocLsb           int32
	st               hevcRPS
	lt               []hevcLT
	slice            hevcSlice
}

// isIRAP, isIDR, isBLA, isCRA and isRASL classify nal_unit_type (Table 7-1).
func isIRAP(t uint8) bool { return t >= 16 && t <= 23 }
func isIDR(t uint8) bool  { return t == 19 || t == 20 }
func isBLA(t uint8) bool  { return t >= 16 && t <= 18 }
func isCRA(t uint8) bool  { return t == 21 }
func isRASL(t uint8) bool { return t == 8 || t == 9 }

// parseHEVCSlice reads a slice segment header (VCL NAL types 0-9, 16-21) up to
// ref_pic_lists_modification, with the parameter sets in force.
func parseHEVCSlice(nal []byte, typ uint8, ps *hevcParams) (hevcSliceHeader, error) {
	var h hevcSliceHeader
	r := newRBSPHead(nal, 2, hevcHeaderLimit)
	h.first = r.flag()
	if isIRAP(typ) {
		h.noOutputPrior = r.flag()
	}
	pp, ok := ps.pps[r.ue()]
	if !ok {
		return h, errHEVCUnsupported
	}
	sp, ok := ps.sps[pp.spsID]
	if !ok {
		return h, errHEVCUnsupported
	}
	if !h.first {
		if pp.dependentSlices {
			h.dependent = r.flag()
		}
		r.u(sp.ctbAddrBits) // slice_segment_address
	}
	if h.dependent {
		return h, r.err
	}
	r.u(pp.extraBits)
	switch r.ue() {
	case 0:
		h.slice.typ = 'B'
	case 1:
		h.slice.typ = 'P'
	case 2:
		h.slice.typ = 'I'
	default:
		return h, errHEVCUnsupported
	}
	if pp.outputFlag {
		r.u(1) // pic_output_flag
	}
	if !isIDR(typ) {
		if err := readSliceRPS(r, &h, &sp); err != nil {
			return h, err
		}
	}
	if sp.sao {
		r.u(1)
		if sp.chroma != 0 {
			r.u(1)
		}
	}
	if h.slice.typ != 'I' {
		if err := readSliceLists(r, &h, &pp); err != nil {
			return h, err
		}
	}
	return h, r.err
}

// readSliceRPS reads a non-IDR slice header's POC LSBs and reference picture set.
func readSliceRPS(r *bitReader, h *hevcSliceHeader, sp *hevcSPS) error {
	h.pocLsb = int32(r.u(sp.log2MaxPocLsb))
	if !r.flag() { // short_term_ref_pic_set_sps_flag
		rps, err := readShortTermRPS(r, sp.rps, len(sp.rps), true)
		if err != nil {
			return err
		}
		h.st = rps
	} else {
		if len(sp.rps) == 0 {
			return errHEVCUnsupported
		}
		i := r.u(ceilLog2(len(sp.rps)))
		if i >= len(sp.rps) {
			return errHEVCUnsupported
		}
		h.st = sp.rps[i]
	}
	if sp.ltPresent {
		nSPS := 0
		if len(sp.ltLsb) > 0 {
			nSPS = r.ue()
		}
		nSH := r.ue()
		if nSPS > len(sp.ltLsb) || nSPS+nSH > 32 {
			return errHEVCUnsupported
		}
		var prev int64
		for i := 0; i < nSPS+nSH && r.err == nil; i++ {
			var e hevcLT
			if i < nSPS {
				k := 0
				if len(sp.ltLsb) > 1 {
					k = r.u(ceilLog2(len(sp.ltLsb)))
				}
				if k >= len(sp.ltLsb) {
					return errHEVCUnsupported
				}
				e.lsb, e.used = sp.ltLsb[k], sp.ltUsed[k]
			} else {
				e.lsb, e.used = int32(r.u(sp.log2MaxPocLsb)), r.flag()
			}
			if e.msb = r.flag(); e.msb {
				d := int64(r.ue())
				if i != 0 && i != nSPS {
					d += prev
				}
				e.deltaMsb, prev = d, d
			}
			h.lt = append(h.lt, e)
		}
	}
	if sp.temporalMVP {
		r.u(1) // slice_temporal_mvp_enabled_flag
	}
	return r.err
}

// readSliceLists reads the active list sizes and ref_pic_lists_modification of a P or B slice.
func readSliceLists(r *bitReader, h *hevcSliceHeader, pp *hevcPPS) error {
	s := &h.slice
	lists := 1
	if s.typ == 'B' {
		lists = 2
	}
	s.n = [2]int{pp.numRefIdxDefault[0], 0}
	if lists == 2 {
		s.n[1] = pp.numRefIdxDefault[1]
	}
	if r.flag() { // num_ref_idx_active_override_flag
		for l := 0; l < lists; l++ {
			s.n[l] = r.ue() + 1
		}
	}
	if s.n[0] > 16 || s.n[1] > 16 {
		return errHEVCUnsupported
	}
	total := h.numPicTotalCurr()
	if total == 0 {
		return errHEVCUnsupported // FFmpeg: "Zero refs for a frame with P or B slices"
	}
	if !pp.listsModification || total <= 1 {
		return r.err
	}
	bits := ceilLog2(total)
	for l := 0; l < lists; l++ {
		if !r.flag() { // ref_pic_list_modification_flag_lX
			continue
		}
		s.mods[l] = make([]uint8, s.n[l])
		for i := range s.mods[l] {
			s.mods[l][i] = uint8(r.u(bits))
		}
	}
	return r.err
}

// numPicTotalCurr counts the entries the current picture may use (7-55; FFmpeg's
// ff_hevc_frame_nb_refs).
func (h *hevcSliceHeader) numPicTotalCurr() int {
	n := 0
	for _, u := range h.st.used {
		if u {
			n++
		}
	}
	for _, e := range h.lt {
		if e.used {
			n++
		}
	}
	return n
}
