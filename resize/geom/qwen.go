package geom

import (
	"math"
	"strings"
)

// qwen-vl-utils versions whose smart_resize / fetch_video differ (SAMPLING.md §1–2, §8.3).
const (
	QwenV0010 = "0.0.10" // no max(factor, ·) in the downscale branch; pixel constants in 28-units
	QwenV0011 = "0.0.11" // adds max(factor, ·) in the downscale branch
	QwenV0014 = "0.0.14" // budgets in tokens × factor²; asserts max ≥ min; max(factor, ·) gone again
)

// qwen-vl-utils 0.0.10/0.0.11 video constants (pixels, independent of the factor).
const (
	qwenVideoMinPixels   = 128 * 28 * 28 // VIDEO_MIN_PIXELS
	qwenVideoMaxPixels   = 768 * 28 * 28 // VIDEO_MAX_PIXELS
	qwenVideoTotalPixels = 90316800      // int(float(128000*28*28*0.9))
	qwenMaxRatio         = 200           // MAX_RATIO
	qwenModelSeqLen      = 128000        // 0.0.14 MODEL_SEQ_LEN default
	qwenFrameFactor      = 2             // FRAME_FACTOR: frames per temporal patch
	qwenVideoMinTokens   = 128           // 0.0.14 VIDEO_MIN_TOKEN_NUM
	qwenVideoMaxTokens   = 768           // 0.0.14 VIDEO_MAX_TOKEN_NUM
)

// Qwen is qwen-vl-utils fetch_video's resize: the per-frame pixel cap that depends on the number of
// sampled frames, then smart_resize (source: QwenLM/Qwen2.5-VL and QwenLM/Qwen3-VL
// qwen-vl-utils/src/qwen_vl_utils/vision_process.py):
//
//	max_pixels = max(min(VIDEO_FRAME_MAX, total_pixels / nframes * 2), int(min_pixels * 1.05))
//	max_pixels = min(ele.max_pixels, max_pixels)   # only when the element sets max_pixels
//	(h', w')   = smart_resize(H, W, factor, min_pixels, max_pixels)
//
// MinPixels, MaxPixels and TotalPixels are the element's min_pixels / max_pixels / total_pixels; zero
// means the element does not set them (the version's default applies; for MaxPixels, no extra limit).
type Qwen struct {
	Base        string // spec head it was parsed from ("qwen2.5-vl", "qwen3-vl"); names defaults in String
	Version     string // QwenV0010, QwenV0011 or QwenV0014
	Factor      int    // 28 (image_patch_size 14) or 32 (image_patch_size 16)
	MinPixels   float64
	MaxPixels   float64
	TotalPixels float64
}

// Defaults for the two Qwen spec heads.
func qwenBase(base string) (Qwen, bool) {
	switch base {
	case "qwen2.5-vl":
		return Qwen{Base: base, Version: QwenV0011, Factor: 28}, true
	case "qwen3-vl":
		return Qwen{Base: base, Version: QwenV0014, Factor: 32}, true
	}
	return Qwen{}, false
}

func (g Qwen) String() string {
	base := g.Base
	d, ok := qwenBase(base)
	if !ok { // built by hand: name it by the 2.5 head and spell out what differs
		base = "qwen2.5-vl"
		d, _ = qwenBase(base)
	}
	var opts []string
	if g.Version != d.Version {
		opts = append(opts, "version="+g.Version)
	}
	if g.Factor != d.Factor {
		opts = append(opts, "factor="+itoa(g.Factor))
	}
	if g.MinPixels != 0 {
		opts = append(opts, "min_pixels="+ftoa(g.MinPixels))
	}
	if g.MaxPixels != 0 {
		opts = append(opts, "max_pixels="+ftoa(g.MaxPixels))
	}
	if g.TotalPixels != 0 {
		opts = append(opts, "total_pixels="+ftoa(g.TotalPixels))
	}
	if len(opts) == 0 {
		return base
	}
	return base + ":" + strings.Join(opts, ",")
}

// Caps returns fetch_video's (min_pixels, max_pixels) for nframes sampled frames.
func (g Qwen) Caps(nFrames int) (minPixels, maxPixels float64, err error) {
	if nFrames < 1 || nFrames > MaxFrames {
		return 0, 0, errf("layout", g.String(), ErrFrames, "%d frames", nFrames)
	}
	switch {
	case g.Version != QwenV0010 && g.Version != QwenV0011 && g.Version != QwenV0014:
		return 0, 0, errf("layout", g.String(), ErrBadSpec, "qwen-vl-utils version %q", g.Version)
	case g.Factor < 1:
		return 0, 0, errf("layout", g.String(), ErrBadSpec, "factor %d", g.Factor)
	case g.MinPixels < 0 || g.MaxPixels < 0 || g.TotalPixels < 0:
		return 0, 0, errf("layout", g.String(), ErrBadSpec, "negative pixel option")
	}
	f := float64(g.Factor)
	var frameMin, frameMax, total float64
	if g.Version == QwenV0014 {
		frameMin = qwenVideoMinTokens * f * f
		frameMax = qwenVideoMaxTokens * f * f
		total = qwenModelSeqLen * f * f * 0.9 // a float in 0.0.14 (no int())
	} else {
		frameMin, frameMax, total = qwenVideoMinPixels, qwenVideoMaxPixels, qwenVideoTotalPixels
	}
	minPixels = frameMin
	if g.MinPixels != 0 {
		minPixels = g.MinPixels
	}
	if g.TotalPixels != 0 {
		total = g.TotalPixels
	}
	// max(min(FRAME_MAX, total / nframes * FRAME_FACTOR), int(min_pixels * 1.05)): same float64
	// operations in the same order as CPython.
	maxPixels = math.Max(math.Min(frameMax, total/float64(nFrames)*qwenFrameFactor), math.Trunc(minPixels*1.05))
	if g.MaxPixels != 0 {
		maxPixels = math.Min(g.MaxPixels, maxPixels)
	}
	return minPixels, maxPixels, nil
}

func (g Qwen) Layout(srcW, srcH, nFrames int) (Layout, error) {
	if err := checkSrc(g, srcW, srcH); err != nil {
		return Layout{}, err
	}
	minP, maxP, err := g.Caps(nFrames)
	if err != nil {
		return Layout{}, err
	}
	h, w, err := SmartResize(g.Version, srcH, srcW, g.Factor, minP, maxP)
	if err != nil {
		return Layout{}, wrapLayout(g, err)
	}
	out := Size{w, h}
	if err := checkOut(g, out); err != nil {
		return Layout{}, err
	}
	// One temporal patch = 2 frames of (h/patch)×(w/patch) patches merged 2×2 = (h/f)·(w/f) tokens.
	return Layout{Src: Size{srcW, srcH}, Resize: out,
		Tokens: (h / g.Factor) * (w / g.Factor), TokenFrames: qwenFrameFactor}, nil
}

// SmartResize is qwen-vl-utils smart_resize(height, width, factor, min_pixels, max_pixels) of the given
// version, returning (h', w') like the Python function. Errors are ErrAspect (ratio > 200), ErrPixels
// (0.0.14's assertion) or ErrEmpty (a side rounds to 0: 0.0.10/0.0.14 return 0 there and fail later).
func SmartResize(version string, height, width, factor int, minPixels, maxPixels float64) (int, int, error) {
	if height < 1 || width < 1 || factor < 1 {
		return 0, 0, ErrSize
	}
	if version == QwenV0014 && !(maxPixels >= minPixels) {
		return 0, 0, ErrPixels
	}
	hf, wf, ff := float64(height), float64(width), float64(factor)
	if math.Max(hf, wf)/math.Min(hf, wf) > qwenMaxRatio {
		return 0, 0, ErrAspect
	}
	hBar := math.Max(ff, math.RoundToEven(hf/ff)*ff)
	wBar := math.Max(ff, math.RoundToEven(wf/ff)*ff)
	switch {
	case hBar*wBar > maxPixels:
		beta := math.Sqrt(hf * wf / maxPixels)
		hBar = math.Floor(hf/beta/ff) * ff
		wBar = math.Floor(wf/beta/ff) * ff
		if version == QwenV0011 {
			hBar, wBar = math.Max(ff, hBar), math.Max(ff, wBar)
		}
	case hBar*wBar < minPixels:
		beta := math.Sqrt(minPixels / (hf * wf))
		hBar = math.Ceil(hf*beta/ff) * ff
		wBar = math.Ceil(wf*beta/ff) * ff
	}
	return finishSize(hBar, wBar)
}

// QwenHF is the transformers Qwen3VLVideoProcessor resize (models/qwen3_vl/video_processing_qwen3_vl.py):
// smart_resize over a T×H×W budget with temporal_factor 2, min_pixels = size.shortest_edge and
// max_pixels = size.longest_edge. With Cap, the newer cap_pixels_per_frame=True rule applies first:
// max_pixels = max(min(768·f², longest // T), int(shortest·1.05)) · T.
type QwenHF struct {
	Factor    int // patch_size 16 × merge_size 2 = 32
	MinPixels int // size.shortest_edge
	MaxPixels int // size.longest_edge
	Cap       bool
}

// Checkpoint values of Qwen3-VL's video_preprocessor_config.json (second-hand, SAMPLING.md §2).
const (
	qwenHFMinPixels = 4096
	qwenHFMaxPixels = 25165824
)

func (g QwenHF) String() string {
	var opts []string
	if g.Factor != 32 {
		opts = append(opts, "factor="+itoa(g.Factor))
	}
	if g.MinPixels != qwenHFMinPixels {
		opts = append(opts, "min_pixels="+itoa(g.MinPixels))
	}
	if g.MaxPixels != qwenHFMaxPixels {
		opts = append(opts, "max_pixels="+itoa(g.MaxPixels))
	}
	if g.Cap {
		opts = append(opts, "cap=true")
	}
	if len(opts) == 0 {
		return "qwen3-vl-hf"
	}
	return "qwen3-vl-hf:" + strings.Join(opts, ",")
}

func (g QwenHF) Layout(srcW, srcH, nFrames int) (Layout, error) {
	if err := checkSrc(g, srcW, srcH); err != nil {
		return Layout{}, err
	}
	if g.Factor < 1 || g.MinPixels < 0 || g.MaxPixels < 1 {
		return Layout{}, errf("layout", g.String(), ErrBadSpec, "factor %d, pixels %d..%d", g.Factor, g.MinPixels, g.MaxPixels)
	}
	if nFrames < 2 || nFrames > MaxFrames { // smart_resize raises when num_frames < temporal_factor
		return Layout{}, errf("layout", g.String(), ErrFrames, "%d frames (the HF processor needs at least 2)", nFrames)
	}
	maxP := float64(g.MaxPixels)
	if g.Cap {
		f := int64(g.Factor)
		ppf := max(min(768*f*f, int64(g.MaxPixels)/int64(nFrames)), int64(float64(g.MinPixels)*1.05))
		maxP = float64(ppf * int64(nFrames))
	}
	h, w, err := SmartResizeTHW(nFrames, srcH, srcW, 2, g.Factor, float64(g.MinPixels), maxP)
	if err != nil {
		return Layout{}, wrapLayout(g, err)
	}
	out := Size{w, h}
	if err := checkOut(g, out); err != nil {
		return Layout{}, err
	}
	return Layout{Src: Size{srcW, srcH}, Resize: out,
		Tokens: (h / g.Factor) * (w / g.Factor), TokenFrames: qwenFrameFactor}, nil
}

// SmartResizeTHW is the HF Qwen3-VL video smart_resize(num_frames, height, width, temporal_factor,
// factor, min_pixels, max_pixels), returning (h', w').
func SmartResizeTHW(numFrames, height, width, temporalFactor, factor int, minPixels, maxPixels float64) (int, int, error) {
	if height < 1 || width < 1 || factor < 1 || temporalFactor < 1 {
		return 0, 0, ErrSize
	}
	if numFrames < temporalFactor {
		return 0, 0, ErrFrames
	}
	hf, wf, ff := float64(height), float64(width), float64(factor)
	if height < factor || width < factor {
		// scale = max(factor/height, factor/width); height = int(height*scale)
		scale := math.Max(ff/hf, ff/wf)
		hf, wf = math.Trunc(hf*scale), math.Trunc(wf*scale)
		if hf < 1 || wf < 1 {
			return 0, 0, ErrAspect // Python divides by zero in the ratio test; only for ratio ≫ 200
		}
	}
	if math.Max(hf, wf)/math.Min(hf, wf) > qwenMaxRatio {
		return 0, 0, ErrAspect
	}
	tf := float64(temporalFactor)
	hBar := math.RoundToEven(hf/ff) * ff
	wBar := math.RoundToEven(wf/ff) * ff
	tBar := math.RoundToEven(float64(numFrames)/tf) * tf
	switch {
	case tBar*hBar*wBar > maxPixels:
		beta := math.Sqrt(float64(numFrames) * hf * wf / maxPixels)
		hBar = math.Max(ff, math.Floor(hf/beta/ff)*ff)
		wBar = math.Max(ff, math.Floor(wf/beta/ff)*ff)
	case tBar*hBar*wBar < minPixels:
		beta := math.Sqrt(minPixels / (float64(numFrames) * hf * wf))
		hBar = math.Ceil(hf*beta/ff) * ff
		wBar = math.Ceil(wf*beta/ff) * ff
	}
	return finishSize(hBar, wBar)
}

// wrapLayout turns a bare sentinel from the formula functions into an *Error naming the geometry.
func wrapLayout(g Geometry, err error) error {
	return &Error{Op: "layout", Spec: g.String(), Err: err}
}

// finishSize converts both smart_resize variants' float results to pixel sizes, with their shared
// failure modes: a side too large for an int, or a side rounded down to nothing.
func finishSize(hBar, wBar float64) (h, w int, err error) {
	h, ok1 := toInt(hBar)
	w, ok2 := toInt(wBar)
	if !ok1 || !ok2 {
		return 0, 0, ErrTooLarge
	}
	if h == 0 || w == 0 {
		return h, w, ErrEmpty
	}
	return h, w, nil
}
