package decode

import "github.com/asticode/go-astiav"

// StreamHeader is what the container says about the decoded stream, as Python readers read it from
// PyAV's Stream (harness loaders take their frame counts and rates from here, not from the index).
type StreamHeader struct {
	Index int `json:"index"` // the stream's index in the file
	// NbFrames is AVStream.nb_frames: PyAV's stream.frames (0 when the container does not say).
	NbFrames int64 `json:"nb_frames"`
	// AvgFrameRate is AVStream.avg_frame_rate: PyAV's stream.average_rate (None there when Num or
	// Den is 0).
	AvgFrameRate Rational `json:"avg_frame_rate"`
	RFrameRate   Rational `json:"r_frame_rate"` // AVStream.r_frame_rate (PyAV's base_rate)
	TimeBase     Rational `json:"time_base"`
	StartTime    int64    `json:"start_time"` // AVStream.start_time, stream time base (NoPTS when unknown)
	Duration     int64    `json:"duration"`   // AVStream.duration, stream time base
	// Extradata: the codec's extradata (torchvision's read_video looks for DivX packed B-frames in it).
	Extradata []byte `json:"-"`
}

// NoPTS is FFmpeg's AV_NOPTS_VALUE, for StreamHeader.StartTime and Duration.
const NoPTS = astiav.NoPtsValue

// Header returns the container's description of the decoded stream (after Open's stream analysis).
func (v *Video) Header() StreamHeader {
	s := v.stream()
	rat := func(r astiav.Rational) Rational { return Rational{Num: r.Num(), Den: r.Den()} }
	return StreamHeader{
		Index:        v.streamIndex,
		NbFrames:     s.NbFrames(),
		AvgFrameRate: rat(s.AvgFrameRate()),
		RFrameRate:   rat(s.RFrameRate()),
		TimeBase:     rat(s.TimeBase()),
		StartTime:    s.StartTime(),
		Duration:     s.Duration(),
		Extradata:    append([]byte(nil), s.CodecParameters().ExtraData()...),
	}
}

// Packets is the number of packets of the decoded stream the index scan read (decord's len(vr)
// counts these, one frame per packet, whether or not the decoder outputs a picture for each).
func (v *Video) Packets() int { return len(v.pkts) }
