package decode

import (
	"fmt"
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
	Threads         int           // decoder threads, 0 = FFmpeg auto
}

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
	case o.MaxFrameArea < 0, o.MaxStreams < 0, o.ProbeSize < 0, o.AnalyzeDuration < 0, o.Threads < 0:
		return o, fmt.Errorf("%w: negative limit", ErrBadOption)
	case o.ProbeSize < 32:
		return o, fmt.Errorf("%w: probe size %d < 32 bytes", ErrBadOption, o.ProbeSize)
	}
	if _, err := ParseHWAccel(o.HWAccel); err != nil {
		return o, err
	}
	return o, nil
}
