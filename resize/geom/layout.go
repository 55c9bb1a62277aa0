package geom

import "fmt"

// Limits that keep hostile inputs and specs bounded in memory and time.
const (
	// MaxSide is the largest source width or height accepted (decode caps frames far below this).
	MaxSide = 1 << 16
	// MaxOutputPixels bounds the area of any image a Layout asks for (64 Mi pixels = 192 MiB RGB24).
	MaxOutputPixels = 1 << 26
	// MaxFrames is the largest frame count accepted by frame-count-dependent policies.
	MaxFrames = 1 << 20
)

// Size is a width × height in pixels.
type Size struct {
	W int `json:"w"`
	H int `json:"h"`
}

func (s Size) String() string { return fmt.Sprintf("%dx%d", s.W, s.H) }

// Rect is a rectangle inside an image: top-left corner (X, Y), width W, height H.
type Rect struct {
	X int `json:"x"`
	Y int `json:"y"`
	W int `json:"w"`
	H int `json:"h"`
}

// Layout is what the model sees for one source frame.
//
// The whole frame is resized to Resize. If Crop is set, only that rectangle of the resized image is kept
// (centre crop). If Tiles is set, each tile is cut from the resized image (row-major order) and fed as its
// own image, followed by a thumbnail when Thumb is set: a direct resize of the source frame to *Thumb.
// If Pad is set, the resized image is placed at the top left of a Pad-sized canvas whose other pixels
// are zero in the tensor's own dtype (0 for uint8, 0.0 after normalisation for floats: PaddleOCR's
// padding).
//
// Tokens is the number of LLM tokens the vision encoder produces for TokenFrames consecutive frames
// (Qwen merges 2 frames per temporal patch, so TokenFrames is 2 there and 1 elsewhere); 0 means the
// geometry defines no token count. Use TokensFor for a frame count.
type Layout struct {
	Src         Size   `json:"src"`
	Resize      Size   `json:"resize"`
	Crop        *Rect  `json:"crop,omitempty"`
	Tiles       []Rect `json:"tiles,omitempty"`
	Thumb       *Size  `json:"thumb,omitempty"`
	Pad         *Size  `json:"pad,omitempty"`
	Tokens      int    `json:"tokens,omitempty"`
	TokenFrames int    `json:"token_frames"`
}

// Output is the size of the (first) image fed to the model: the crop or the padded canvas if there is
// one, else the resize. For tiled layouts each tile is a separate image; see Images.
func (l Layout) Output() Size {
	switch {
	case l.Crop != nil:
		return Size{l.Crop.W, l.Crop.H}
	case l.Pad != nil:
		return *l.Pad
	}
	return l.Resize
}

// Images is the number of images the model receives for one frame (tiles + thumbnail, or 1).
func (l Layout) Images() int {
	if len(l.Tiles) == 0 {
		return 1
	}
	n := len(l.Tiles)
	if l.Thumb != nil {
		n++
	}
	return n
}

// ImageSize is the size of every image the model receives for one frame and how many there are; a
// layout's images share one tensor ([N, images, H, W, 3]), so tiles and thumbnail must be one size
// (true of every InternVL preset), else ErrLayout.
func (l Layout) ImageSize() (w, h, images int, err error) {
	if len(l.Tiles) == 0 {
		s := l.Output()
		return s.W, s.H, 1, nil
	}
	w, h = l.Tiles[0].W, l.Tiles[0].H
	for _, t := range l.Tiles {
		if t.W != w || t.H != h {
			return 0, 0, 0, errf("layout", "", ErrLayout, "tiles of different sizes (%dx%d, %dx%d) cannot share a tensor", w, h, t.W, t.H)
		}
	}
	if l.Thumb != nil && (l.Thumb.W != w || l.Thumb.H != h) {
		return 0, 0, 0, errf("layout", "", ErrLayout, "thumbnail %dx%d differs from tiles %dx%d", l.Thumb.W, l.Thumb.H, w, h)
	}
	return w, h, l.Images(), nil
}

// TokensFor is the number of vision tokens for n frames: Tokens per started group of TokenFrames frames
// (Qwen pads an odd frame count by repeating the last frame). 0 when Tokens is undefined.
func (l Layout) TokensFor(n int) int {
	if l.Tokens == 0 || n <= 0 {
		return 0
	}
	g := l.TokenFrames
	if g < 1 {
		g = 1
	}
	return (n + g - 1) / g * l.Tokens
}

// Geometry is one resize policy. Layout computes what the model sees for a srcW×srcH frame when nFrames
// frames are sampled (policies that do not depend on the frame count ignore it; those that do reject
// nFrames < 1 with ErrFrames). String returns the canonical spec: Parse(g.String()) gives back g.
type Geometry interface {
	Layout(srcW, srcH, nFrames int) (Layout, error)
	String() string
}

func checkSrc(g Geometry, w, h int) error {
	if w < 1 || h < 1 || w > MaxSide || h > MaxSide {
		return errf("layout", g.String(), ErrSize, "%dx%d (each side must be 1..%d)", w, h, MaxSide)
	}
	return nil
}

func checkOut(g Geometry, s Size) error {
	if s.W < 1 || s.H < 1 {
		return errf("layout", g.String(), ErrEmpty, "%dx%d", s.W, s.H)
	}
	if int64(s.W)*int64(s.H) > MaxOutputPixels || s.W > MaxOutputPixels || s.H > MaxOutputPixels {
		return errf("layout", g.String(), ErrTooLarge, "%dx%d > %d pixels", s.W, s.H, MaxOutputPixels)
	}
	return nil
}

// toInt converts a float result of a Python formula to int, refusing values that cannot be an image side
// (so a huge spec value cannot overflow the conversion).
func toInt(v float64) (int, bool) {
	if v != v || v < 0 || v > MaxOutputPixels {
		return 0, false
	}
	return int(v), true
}
