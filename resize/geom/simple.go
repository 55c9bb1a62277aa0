package geom

import (
	"math"
	"strconv"
)

// Native keeps the source size (frames as decoded; harness presets that leave resizing to the model).
type Native struct{}

func (Native) String() string { return "native" }

func (g Native) Layout(srcW, srcH, _ int) (Layout, error) {
	if err := checkSrc(g, srcW, srcH); err != nil {
		return Layout{}, err
	}
	s := Size{srcW, srcH}
	if err := checkOut(g, s); err != nil {
		return Layout{}, err
	}
	return Layout{Src: s, Resize: s, TokenFrames: 1}, nil
}

// Fixed resizes every frame to W×H, aspect not kept (LLaVA SigLIP 384×384, InternVL thumbnails).
// Tokens, when > 0, is the per-frame token count the preset defines.
type Fixed struct {
	W, H   int
	Tokens int
}

func (g Fixed) String() string {
	s := strconv.Itoa(g.W) + "x" + strconv.Itoa(g.H)
	if g.Tokens > 0 {
		s += ":tokens=" + strconv.Itoa(g.Tokens)
	}
	return s
}

func (g Fixed) Layout(srcW, srcH, _ int) (Layout, error) {
	if err := checkSrc(g, srcW, srcH); err != nil {
		return Layout{}, err
	}
	s := Size{g.W, g.H}
	if err := checkOut(g, s); err != nil {
		return Layout{}, err
	}
	return Layout{Src: Size{srcW, srcH}, Resize: s, Tokens: g.Tokens, TokenFrames: 1}, nil
}

// ShortEdge resizes so the shorter side is Size and the longer side is int(Size*long/short) (truncated),
// as HF CLIPImageProcessor's get_resize_output_image_size(default_to_square=False) does. Crop > 0 then
// keeps a centre Crop×Crop square with top = (H−Crop)//2, left = (W−Crop)//2 (HF center_crop). Crop must
// not exceed Size, so the crop always lies inside the resized image.
type ShortEdge struct {
	Size   int
	Crop   int // 0: no crop
	Tokens int
}

func (g ShortEdge) String() string {
	s := "short:" + strconv.Itoa(g.Size)
	if g.Crop > 0 {
		s += "+crop"
		if g.Crop != g.Size {
			s += ":" + strconv.Itoa(g.Crop)
		}
	}
	if g.Tokens > 0 {
		s += ",tokens=" + strconv.Itoa(g.Tokens)
	}
	return s
}

func (g ShortEdge) Layout(srcW, srcH, _ int) (Layout, error) {
	if err := checkSrc(g, srcW, srcH); err != nil {
		return Layout{}, err
	}
	if g.Size < 1 || g.Crop < 0 || g.Crop > g.Size {
		return Layout{}, errf("layout", g.String(), ErrBadSpec, "short side %d, crop %d (need 0 ≤ crop ≤ short side)", g.Size, g.Crop)
	}
	short, long := srcW, srcH
	if srcW > srcH {
		short, long = srcH, srcW
	}
	// int(size*long/short): size*long is an exact int, the true division is correctly rounded and the
	// quotient is at least 1/short away from the next integer, so integer division is identical.
	nl := int64(g.Size) * int64(long) / int64(short)
	if nl > MaxOutputPixels {
		return Layout{}, errf("layout", g.String(), ErrTooLarge, "long side %d", nl)
	}
	out := Size{g.Size, int(nl)}
	if srcW > srcH {
		out = Size{int(nl), g.Size}
	}
	if err := checkOut(g, out); err != nil {
		return Layout{}, err
	}
	l := Layout{Src: Size{srcW, srcH}, Resize: out, Tokens: g.Tokens, TokenFrames: 1}
	if g.Crop > 0 {
		l.Crop = &Rect{X: (out.W - g.Crop) / 2, Y: (out.H - g.Crop) / 2, W: g.Crop, H: g.Crop}
	}
	return l, nil
}

// MaxPixels keeps the source when it has at most Pixels pixels and otherwise scales it down, aspect
// kept, to the largest floor-rounded size with at most Pixels pixels. It never upscales. (framesweep's
// own policy; no upstream formula.)
type MaxPixels struct{ Pixels int }

func (g MaxPixels) String() string { return "maxpix:" + strconv.Itoa(g.Pixels) }

func (g MaxPixels) Layout(srcW, srcH, _ int) (Layout, error) {
	if err := checkSrc(g, srcW, srcH); err != nil {
		return Layout{}, err
	}
	if g.Pixels < 1 {
		return Layout{}, errf("layout", g.String(), ErrBadSpec, "max pixels %d", g.Pixels)
	}
	out := Size{srcW, srcH}
	if int64(srcW)*int64(srcH) > int64(g.Pixels) {
		s := math.Sqrt(float64(g.Pixels) / (float64(srcW) * float64(srcH)))
		out = Size{max(1, int(float64(srcW)*s)), max(1, int(float64(srcH)*s))}
		// Rounding in the square root can leave the product one step over; shave the longer side.
		for int64(out.W)*int64(out.H) > int64(g.Pixels) && (out.W > 1 || out.H > 1) {
			if out.W >= out.H {
				out.W--
			} else {
				out.H--
			}
		}
	}
	if err := checkOut(g, out); err != nil {
		return Layout{}, err
	}
	return Layout{Src: Size{srcW, srcH}, Resize: out, TokenFrames: 1}, nil
}

// PadRight resizes to height H keeping the aspect ratio, to width ⌈H·(w/h)⌉ (w/h a float division,
// as Python computes it) but at most W, and pads on the right to W×H with zeros: PaddleOCR's
// resize_norm_img (PaddleOCR tools/infer/predict_cls.py; the PP-OCR direction classifier takes
// 192×48). The padding is zero in the tensor's dtype (Layout.Pad).
type PadRight struct{ W, H int }

func (g PadRight) String() string { return "pad:" + strconv.Itoa(g.W) + "x" + strconv.Itoa(g.H) }

func (g PadRight) Layout(srcW, srcH, _ int) (Layout, error) {
	if err := checkSrc(g, srcW, srcH); err != nil {
		return Layout{}, err
	}
	canvas := Size{g.W, g.H}
	if err := checkOut(g, canvas); err != nil {
		return Layout{}, err
	}
	w := g.W
	if rw := math.Ceil(float64(g.H) * (float64(srcW) / float64(srcH))); rw <= float64(g.W) {
		w = int(rw)
	}
	return Layout{Src: Size{srcW, srcH}, Resize: Size{w, g.H}, Pad: &canvas, TokenFrames: 1}, nil
}
