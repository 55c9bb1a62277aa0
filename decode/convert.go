package decode

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/asticode/go-astiav"
	"github.com/framesweep/framesweep/rgb"
)

// converter turns decoded frames into RGB24 through the same libavfilter chain the ffmpeg 5.1 CLI builds
// for `-pix_fmt rgb24`: the autorotate filters, then a scale filter with the CLI's default sws flags
// ("bicubic", from fftools' sws_dict), whose colour matrix and range come from each frame ("auto").
// Using the library's own graph is what makes the output bit-exact, 10-bit and 4:4:4 included.
type converter struct {
	mode      ColourMode
	orient    string // filter chain for the orientation ("" = none)
	scaleOpts string // extra scale options (":in_color_matrix=…"), for frames that lost their colour properties

	g         *astiav.FilterGraph
	src, sink *astiav.FilterContext
	key       convKey
	out       *astiav.Frame
	img       rgb.Image

	sws *astiav.SoftwareScaleContext // ColourSwsDefault
}

type convKey struct {
	w, h     int
	pixFmt   astiav.PixelFormat
	sar      astiav.Rational
	timeBase astiav.Rational
}

const swsFlagsCLI = "bicubic" // fftools/ffmpeg_opt.c (5.1): av_dict_set(&ost->sws_dict, "flags", "bicubic", 0)

// newConverterMode is an RGB conversion through the orientation filter orient ("" for none) in a
// colour mode (Options.Colour; "" is ColourStream); ColourSwsDefault ignores orient (Options refuses
// it without NoAutorotate).
func newConverterMode(orient string, mode ColourMode) *converter {
	if mode == "" {
		mode = ColourStream
	}
	c := &converter{mode: mode, orient: orient, out: astiav.AllocFrame()}
	track(c.out)
	return c
}

func (c *converter) freeGraph() {
	if c.g != nil {
		c.g.Free() // frees the filter contexts too
		untrack(c.g)
		c.g, c.src, c.sink = nil, nil, nil
	}
	if c.sws != nil {
		c.sws.Free()
		untrack(c.sws)
		c.sws = nil
	}
}

// Close releases the graph and the frame; idempotent.
func (c *converter) Close() {
	if c == nil {
		return
	}
	c.freeGraph()
	if c.out != nil {
		c.out.Free()
		untrack(c.out)
		c.out = nil
	}
}

func (c *converter) configure(k convKey) error {
	c.freeGraph()
	if c.mode == ColourSwsDefault {
		return c.configureSws(k)
	}
	g := astiav.AllocFilterGraph()
	if g == nil {
		return errors.New("cannot allocate a filter graph")
	}
	track(g)
	c.g = g
	g.SetThreadCount(1) // the conversion filters are not threaded in 5.1; avoid spawning idle workers
	sar := k.sar
	if sar.Num() <= 0 || sar.Den() <= 0 {
		sar = astiav.NewRational(0, 1)
	}
	var err error
	c.src, err = g.NewFilterContext(astiav.FindFilterByName("buffer"), "in", astiav.FilterArgs{
		"pix_fmt":      strconv.Itoa(int(k.pixFmt)),
		"pixel_aspect": strconv.Itoa(sar.Num()) + "/" + strconv.Itoa(sar.Den()),
		"time_base":    k.timeBase.String(),
		"video_size":   strconv.Itoa(k.w) + "x" + strconv.Itoa(k.h),
	})
	if err != nil {
		return fmt.Errorf("buffer source: %w", err)
	}
	c.sink, err = g.NewFilterContext(astiav.FindFilterByName("buffersink"), "out", nil)
	if err != nil {
		return fmt.Errorf("buffer sink: %w", err)
	}
	outputs := astiav.AllocFilterInOut()
	inputs := astiav.AllocFilterInOut()
	defer outputs.Free()
	defer inputs.Free()
	outputs.SetName("in")
	outputs.SetFilterContext(c.src)
	outputs.SetPadIdx(0)
	outputs.SetNext(nil)
	inputs.SetName("out")
	inputs.SetFilterContext(c.sink)
	inputs.SetPadIdx(0)
	inputs.SetNext(nil)
	chain := "scale=flags=" + swsFlagsCLI + c.scaleOpts + ",format=pix_fmts=rgb24"
	if c.mode == ColourFilterBilinear {
		// decord: "scale=W:H" (the displayed size: after its transpose for a rotated stream) into an
		// rgb24 sink. decord's wheels link FFmpeg 4, whose scale filter defaults to flags=bilinear
		// (5.1's default is swscale's bicubic): say it explicitly.
		chain = "scale=iw:ih:flags=bilinear,format=pix_fmts=rgb24"
	}
	if c.orient != "" {
		chain = c.orient + "," + chain
	}
	if err := g.Parse(chain, inputs, outputs); err != nil {
		return fmt.Errorf("filter chain %q: %w", chain, err)
	}
	if err := g.Configure(); err != nil {
		return fmt.Errorf("filter chain %q: %w", chain, err)
	}
	c.key = k
	return nil
}

// convert returns the RGB24 image of f; the image's buffer is reused by the next call.
func (c *converter) convert(f *astiav.Frame, tb astiav.Rational) (*rgb.Image, error) {
	k := convKey{w: f.Width(), h: f.Height(), pixFmt: f.PixelFormat(), sar: f.SampleAspectRatio(), timeBase: tb}
	if (c.g == nil && c.sws == nil) || k != c.key {
		if err := c.configure(k); err != nil {
			return nil, err
		}
	}
	c.out.Unref()
	if c.sws != nil {
		// PyAV's VideoReformatter: one sws_scale of the whole frame into an rgb24 frame.
		c.out.SetWidth(k.w)
		c.out.SetHeight(k.h)
		c.out.SetPixelFormat(astiav.PixelFormatRgb24)
		if err := c.sws.ScaleFrame(f, c.out); err != nil {
			c.out.Unref()
			return nil, fmt.Errorf("swscale: %w", err)
		}
	} else {
		if err := c.src.BuffersrcAddFrame(f, astiav.NewBuffersrcFlags(astiav.BuffersrcFlagKeepRef)); err != nil {
			return nil, fmt.Errorf("filter input: %w", err)
		}
		if err := c.sink.BuffersinkGetFrame(c.out, astiav.NewBuffersinkFlags()); err != nil {
			return nil, fmt.Errorf("filter output: %w", err)
		}
	}
	w, h := c.out.Width(), c.out.Height()
	need := 3 * w * h
	if cap(c.img.Pix) < need {
		c.img.Pix = make([]byte, need)
	}
	c.img.W, c.img.H, c.img.Stride, c.img.Pix = w, h, 3*w, c.img.Pix[:need]
	if _, err := c.out.ImageCopyToBuffer(c.img.Pix, 1); err != nil {
		c.out.Unref()
		return nil, fmt.Errorf("copy RGB: %w", err)
	}
	c.out.Unref()
	return &c.img, nil
}

// configureSws makes the swscale context PyAV's VideoReformatter makes for frame.reformat(format=
// "rgb24"): sws_getCachedContext(w, h, src, w, h, RGB24, SWS_BILINEAR, NULL, NULL, NULL), and no
// sws_setColorspaceDetails (source and destination colourspace are both "default"), so swscale keeps
// its BT.601 coefficients and takes the range from the pixel format alone.
func (c *converter) configureSws(k convKey) error {
	if k.w <= 0 || k.h <= 0 {
		return fmt.Errorf("swscale: frame size %dx%d", k.w, k.h)
	}
	s, err := astiav.CreateSoftwareScaleContext(k.w, k.h, k.pixFmt, k.w, k.h, astiav.PixelFormatRgb24,
		astiav.NewSoftwareScaleContextFlags(astiav.SoftwareScaleContextFlagBilinear))
	if err != nil {
		return fmt.Errorf("swscale from %s %dx%d: %w", pixFmtName(k.pixFmt), k.w, k.h, err)
	}
	track(s)
	c.sws = s
	c.key = k
	return nil
}

// colourScaleOpts states the stream's colour matrix and range explicitly for the scale filter.
// Frames downloaded from a GPU lose them (go-astiav v0.16 cannot copy frame properties), and the
// scaler would otherwise assume BT.601.
func colourScaleOpts(cs astiav.ColorSpace, cr astiav.ColorRange) string {
	o := ""
	switch cs {
	case astiav.ColorSpaceBt709:
		o += ":in_color_matrix=bt709"
	case astiav.ColorSpaceBt470Bg, astiav.ColorSpaceSmpte170M:
		o += ":in_color_matrix=bt601"
	case astiav.ColorSpaceFcc:
		o += ":in_color_matrix=fcc"
	case astiav.ColorSpaceSmpte240M:
		o += ":in_color_matrix=smpte240m"
	case astiav.ColorSpaceBt2020Ncl, astiav.ColorSpaceBt2020Cl:
		o += ":in_color_matrix=bt2020"
	}
	switch cr {
	case astiav.ColorRangeMpeg:
		o += ":in_range=tv"
	case astiav.ColorRangeJpeg:
		o += ":in_range=pc"
	}
	return o
}
