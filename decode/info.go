package decode

import (
	"math"

	"github.com/asticode/go-astiav"
)

// Info describes an opened video; its JSON is `framesweep probe --json` (DESIGN.md "Stable surface").
type Info struct {
	Path         string  `json:"path"`
	Container    string  `json:"container"`
	Codec        string  `json:"codec"`
	PixFmt       string  `json:"pix_fmt"`
	Width        int     `json:"width"`  // coded size, before orientation
	Height       int     `json:"height"` // coded size, before orientation
	Rotation     int     `json:"rotation"`
	Frames       int     `json:"frames"`        // from the demux scan: what the decoder outputs
	FramesHeader *int64  `json:"frames_header"` // what the container claims (null when it says nothing)
	FPS          float64 `json:"fps"`
	DurationS    float64 `json:"duration_s"`
	StartS       float64 `json:"start_s"`
	Keyframes    int     `json:"keyframes"`
	VFR          bool    `json:"vfr"`
	StreamIndex  int     `json:"stream_index"` // the stream decoded: frame i is this stream's i-th picture
	// StreamSelection says how StreamIndex was chosen: "best" (FFmpeg's best video stream, the
	// default), "requested" (Options.Stream) or "first" (Options.FirstVideoStream).
	StreamSelection string   `json:"stream_selection"`
	VideoStreams    []int    `json:"video_streams"` // every video stream of the file
	TimeBase        Rational `json:"time_base"`
	// TimestampsSynthesized is true when the stream carries no usable timestamps (raw elementary
	// streams): frames are then numbered in output order and PTS are i at 1/fps.
	TimestampsSynthesized bool `json:"timestamps_synthesized,omitempty"`
	// IdentifiedBy says how decoded frames are matched to the index: "pts" (seeks possible) or
	// "output_order" (no usable presentation timestamps: always decoded from the start).
	IdentifiedBy    string      `json:"identified_by"`
	Orientation     Orientation `json:"orientation"`
	OutWidth        int         `json:"out_width"` // size of returned frames (after orientation)
	OutHeight       int         `json:"out_height"`
	HWAccel         string      `json:"hwaccel"`                    // device used for decoding: "none", "cuda", "vaapi"
	HWAccelFallback string      `json:"hwaccel_fallback,omitempty"` // why the CPU is used although hardware was requested

	PTSS []float64 `json:"pts_s,omitempty"` // only with frames detail (WithFramesDetail)
	Key  []bool    `json:"key,omitempty"`
}

// Info returns the description of the video (without per-frame detail).
func (v *Video) Info() Info { return v.info }

// WithFramesDetail returns Info plus per-frame timestamps and keyframe flags (`--frames-detail`).
func (v *Video) WithFramesDetail() Info {
	in := v.info
	in.PTSS = append([]float64(nil), v.idx.Seconds...)
	in.Key = append([]bool(nil), v.idx.Key...)
	return in
}

func (v *Video) buildInfo() {
	st := v.stream()
	cp := st.CodecParameters()
	in := Info{
		Path:            v.path,
		Codec:           codecName(cp.CodecID()),
		PixFmt:          pixFmtName(cp.PixelFormat()),
		Width:           cp.Width(),
		Height:          cp.Height(),
		Frames:          v.NumFrames(),
		StreamIndex:     v.streamIndex,
		StreamSelection: v.streamBy,
		VideoStreams:    append([]int(nil), v.videoStreams...),
		TimeBase:        v.idx.TimeBase,
		HWAccel:         "none",
	}
	if f := v.fc.InputFormat(); f != nil {
		in.Container = f.Name()
	}
	if n := st.NbFrames(); n > 0 {
		in.FramesHeader = &n
	}
	v.orientInfo(&in)
	v.timingInfo(&in)
	in.IdentifiedBy = "pts"
	if v.counting {
		in.IdentifiedBy = "output_order"
	}
	if v.hw.Device != "" {
		in.HWAccel = string(v.hw.Device)
	}
	in.HWAccelFallback = v.hw.Fallback
	v.info = in
}

// orientInfo reads the display matrix: ffprobe's rotation, the transform Read applies (v.orient) and
// the size of returned frames.
func (v *Video) orientInfo(in *Info) {
	var m *[9]int32
	if b := v.stream().SideData(astiav.PacketSideDataTypeDisplaymatrix); len(b) >= 36 {
		if dm, err := astiav.NewDisplayMatrixFromBytes(b); err == nil {
			var mm [9]int32
			for i := range mm {
				mm[i] = int32(dm[i])
			}
			m = &mm
			if r := displayRotationGet(m); !math.IsNaN(r) {
				in.Rotation = int(math.Round(r))
			}
		}
	}
	o := orientationFromMatrix(m)
	o.Applied = !v.opts.NoAutorotate && !o.IsIdentity()
	v.orient = o
	in.Orientation = o
	in.OutWidth, in.OutHeight = in.Width, in.Height
	if o.Applied && (o.RotationDeg == 90 || o.RotationDeg == 270) {
		in.OutWidth, in.OutHeight = in.Height, in.Width
	}
}

// timingInfo derives start, duration, frame rate, keyframe count and VFR from the index.
func (v *Video) timingInfo(in *Info) {
	st := v.stream()
	n := v.NumFrames()
	sec := v.idx.Seconds
	in.StartS = sec[0]
	for _, k := range v.idx.Key {
		if k {
			in.Keyframes++
		}
	}
	tick := v.idx.TimeBase.Float64()
	if n > 1 {
		minD, maxD, sum := math.Inf(1), math.Inf(-1), 0.0
		for i := 1; i < n; i++ {
			d := sec[i] - sec[i-1]
			minD, maxD, sum = math.Min(minD, d), math.Max(maxD, d), sum+d
		}
		mean := sum / float64(n-1)
		// Jitter of up to 1.5 ticks is rounding (e.g. 23.976 fps in a 1 ms time base), not VFR.
		in.VFR = maxD-minD > 1.5*tick+1e-9
		in.DurationS = sec[n-1] - sec[0] + mean
	}
	if r := st.AvgFrameRate(); r.Num() > 0 && r.Den() > 0 && !v.counting {
		in.FPS = r.Float64()
	} else if in.DurationS > 0 {
		in.FPS = float64(n) / in.DurationS
	} else if r := st.RFrameRate(); r.Num() > 0 && r.Den() > 0 {
		in.FPS = r.Float64()
	}
	if v.counting && v.idx.TimeBase != (Rational{st.TimeBase().Num(), st.TimeBase().Den()}) {
		in.TimestampsSynthesized = true
	}
}

func pixFmtName(p astiav.PixelFormat) string {
	if p == astiav.PixelFormatNone {
		return ""
	}
	return p.String()
}
