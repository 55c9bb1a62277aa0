package decode

import (
	"fmt"
	"strings"
	"time"
)

// Defaults for Options' zero values. They bound what a hostile file can make FFmpeg do at open time.
const (
	DefaultMaxFrameArea    = 4096 * 4096
	DefaultMaxStreams      = 32
	DefaultProbeSize       = 32 << 20 // bytes read while probing the streams
	DefaultAnalyzeDuration = 10 * time.Second
)

// Options bound and configure Open. The zero value is the documented default.
type Options struct {
	MaxFrameArea    int           // default 4096*4096 (0 = default); larger frames → ErrTooLarge
	MaxStreams      int           // default 32 (0 = default); more streams → ErrTooManyStreams
	ProbeSize       int64         // bytes read to probe streams (0 = DefaultProbeSize)
	AnalyzeDuration time.Duration // stream analysis bound (0 = DefaultAnalyzeDuration)
	NoAutorotate    bool          // false: apply display rotation/reflection like the ffmpeg CLI
	HWAccel         string        // "" or "none" (CPU), "cuda", "vaapi", "auto"
	// Threads > 0: one decoder with that many threads (no parallel segments); 0 = the planner picks
	// decoders and threads from the cores it gets (docs/decode.md "Parallel segments").
	Threads int
	// Cores is the budget of cores shared with other Reads (nil = DefaultCorePool()); MaxCores caps
	// what one Read takes from it (0 = no cap). A worker process has its own pool: pass its share here.
	Cores    *CorePool `json:"-"`
	MaxCores int       `json:",omitempty"`
	// DecodeAll sends every packet to the decoder; by default the packets of H.264 and HEVC pictures that no
	// picture references and no one asked for are dropped (nonref.go; Stats.Skipped counts them), and so
	// are H.264 reference pictures none of the frames asked for uses (h26x/h264refs.go; Stats.SkippedReferences).
	// OnDamaged keep decodes them all too: FFmpeg conceals a damaged picture from the last one
	// decoded, so a delivered damaged frame is then the same whatever else was asked for.
	DecodeAll bool
	// Stream selects the video stream by its index in the file (ffprobe's numbering, `-map 0:N`);
	// nil = FFmpeg's best video stream (av_find_best_stream, what torchcodec and decord decode by
	// default). Info.StreamIndex reports the one used. Set it with StreamAt(n).
	Stream *int
	// OnDamaged says what Read does with a frame the decoder concealed (see ErrDamaged):
	// DamagedFail ("" = default) refuses it (*DamagedError); DamagedKeep delivers it with
	// Frame.Damaged set. Either way Stats.Damaged lists it.
	OnDamaged DamagePolicy
	// FirstVideoStream picks the first video stream in file order (PyAV's container.streams.video[0],
	// what lmms-eval's read_video and torchvision's read_video decode) instead of FFmpeg's best one.
	// It cannot be combined with Stream.
	FirstVideoStream bool
	// Name is what errors call the video (default: the path opened). A caller that opens a checked
	// file as /proc/self/fd/N names it here, so that no message, a harness loader's notes included,
	// names the descriptor instead of the video.
	Name string `json:",omitempty"`
	// Colour says how decoded frames become RGB24 (ColourStream, "" = the default: the ffmpeg CLI's
	// conversion; see ColourMode for the harness conversions).
	Colour ColourMode
}

// ColourMode is Options.Colour: how a decoded frame becomes RGB24.
type ColourMode string

// The colour conversions. The zero value means ColourStream.
const (
	// ColourStream is framesweep's own conversion, bit-identical to `ffmpeg -pix_fmt rgb24`: the
	// CLI's filter chain (scale flags bicubic), colour matrix and range taken from each frame.
	ColourStream ColourMode = "stream"
	// ColourSwsDefault is swscale called directly with SWS_BILINEAR and no colour details, as PyAV's
	// frame.to_ndarray(format="rgb24") / frame.to_rgb() do (lmms-eval's read_video, torchvision's
	// read_video): swscale's default BT.601 matrix and the range its pixel format implies (yuvj*:
	// full, else limited), whatever the stream is tagged. It converts without filters, so it cannot
	// rotate: it needs NoAutorotate (PyAV does not rotate either).
	ColourSwsDefault ColourMode = "sws-default"
	// ColourFilterBilinear is libavfilter's "scale=W:H" into an rgb24 buffer sink with flags
	// bilinear (the scale filter's default in FFmpeg 4, which decord's wheels link), the matrix and
	// range taken from each frame: decord's FFMPEGFilterGraph (src/video/ffmpeg/filter_graph.cc,
	// threaded_decoder.cc). Written from that source; decord does not install here (unverified).
	ColourFilterBilinear ColourMode = "filter-bilinear"
)

// ParseColourMode reads a ColourMode ("" = ColourStream).
func ParseColourMode(s string) (ColourMode, error) {
	switch m := ColourMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", ColourStream:
		return ColourStream, nil
	case ColourSwsDefault, ColourFilterBilinear:
		return m, nil
	}
	return "", fmt.Errorf("%w: colour %q: want %s, %s or %s", ErrBadOption, s, ColourStream, ColourSwsDefault, ColourFilterBilinear)
}

// DamagePolicy is Options.OnDamaged.
type DamagePolicy string

// The damage policies. The zero value means DamagedFail.
const (
	DamagedFail DamagePolicy = "fail"
	DamagedKeep DamagePolicy = "keep"
)

// ParseDamagePolicy reads "fail" / "keep" ("" = fail), as the CLI's --on-damaged takes them.
func ParseDamagePolicy(s string) (DamagePolicy, error) {
	switch p := DamagePolicy(strings.ToLower(strings.TrimSpace(s))); p {
	case "", DamagedFail:
		return DamagedFail, nil
	case DamagedKeep:
		return DamagedKeep, nil
	}
	return "", fmt.Errorf("%w: on-damaged %q: want fail or keep", ErrBadOption, s)
}

// StreamAt returns a pointer to n, for Options.Stream.
func StreamAt(n int) *int { return &n }

func (o Options) withDefaults() (Options, error) {
	if o.MaxFrameArea == 0 {
		o.MaxFrameArea = DefaultMaxFrameArea
	}
	if o.MaxStreams == 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.ProbeSize == 0 {
		o.ProbeSize = DefaultProbeSize
	}
	if o.AnalyzeDuration == 0 {
		o.AnalyzeDuration = DefaultAnalyzeDuration
	}
	switch {
	case o.MaxFrameArea < 0, o.MaxStreams < 0, o.ProbeSize < 0, o.AnalyzeDuration < 0, o.Threads < 0, o.MaxCores < 0:
		return o, fmt.Errorf("%w: negative limit", ErrBadOption)
	case o.ProbeSize < 32:
		return o, fmt.Errorf("%w: probe size %d < 32 bytes", ErrBadOption, o.ProbeSize)
	}
	if _, err := ParseHWAccel(o.HWAccel); err != nil {
		return o, err
	}
	p, err := ParseDamagePolicy(string(o.OnDamaged))
	if err != nil {
		return o, err
	}
	o.OnDamaged = p
	c, err := ParseColourMode(string(o.Colour))
	if err != nil {
		return o, err
	}
	o.Colour = c
	if c == ColourSwsDefault && !o.NoAutorotate {
		return o, fmt.Errorf("%w: colour %s converts without filters and cannot rotate: set NoAutorotate", ErrBadOption, c)
	}
	if c != ColourStream && o.HWAccel != "" && o.HWAccel != "none" {
		return o, fmt.Errorf("%w: colour %s is a CPU harness conversion: no hwaccel", ErrBadOption, c)
	}
	if o.FirstVideoStream && o.Stream != nil {
		return o, fmt.Errorf("%w: FirstVideoStream and Stream both name a stream", ErrBadOption)
	}
	if o.Stream != nil {
		n := *o.Stream // a copy: the caller's variable may change after Open
		if n < 0 {
			return o, fmt.Errorf("%w: negative stream index %d", ErrBadOption, n)
		}
		o.Stream = &n
	}
	return o, nil
}
