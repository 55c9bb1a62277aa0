package decode

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
)

// Orientation is the display transform of the stream (from its display matrix) and whether it was
// applied to the returned frames. The transform is: rotate clockwise by RotationDeg, then flip.
type Orientation struct {
	RotationDeg int  `json:"rotation_deg"` // clockwise, 0/90/180/270 (other angles are rare and use FFmpeg's rotate filter)
	HFlip       bool `json:"hflip"`
	VFlip       bool `json:"vflip"`
	Applied     bool `json:"applied"`
	filter      string
}

// IsIdentity reports whether the transform changes nothing.
func (o Orientation) IsIdentity() bool { return o.filter == "" }

// Filter returns the libavfilter chain that applies the transform ("" for none).
func (o Orientation) Filter() string { return o.filter }

// orientationWire is Orientation as JSON: its fields and the filter chain, so that a description that
// crosses a process boundary (a worker's Info, internal/engine/worker) keeps what IsIdentity and Filter
// say, and with them the objects' rotation_applied and orientation metadata.
type orientationWire struct {
	RotationDeg int    `json:"rotation_deg"`
	HFlip       bool   `json:"hflip"`
	VFlip       bool   `json:"vflip"`
	Applied     bool   `json:"applied"`
	Filter      string `json:"filter,omitempty"`
}

// MarshalJSON writes the fields and the filter chain ("filter", omitted when none).
func (o Orientation) MarshalJSON() ([]byte, error) {
	return json.Marshal(orientationWire{o.RotationDeg, o.HFlip, o.VFlip, o.Applied, o.filter})
}

// UnmarshalJSON reads what MarshalJSON writes; a filter orientationFromMatrix never makes is an error.
func (o *Orientation) UnmarshalJSON(b []byte) error {
	var w orientationWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if !knownFilter(w.Filter) {
		return fmt.Errorf("orientation: unknown filter %q", w.Filter)
	}
	*o = Orientation{RotationDeg: w.RotationDeg, HFlip: w.HFlip, VFlip: w.VFlip, Applied: w.Applied, filter: w.Filter}
	return nil
}

var rotateFilter = regexp.MustCompile(`^rotate=-?[0-9]+\.[0-9]+\*PI/180$`)

// knownFilter reports whether f is a chain orientationFromMatrix makes.
func knownFilter(f string) bool {
	switch f {
	case "", "transpose=clock", "transpose=cclock", "transpose=clock_flip", "transpose=cclock_flip", "hflip", "vflip", "hflip,vflip":
		return true
	}
	return rotateFilter.MatchString(f)
}

// orientationFromMatrix mirrors the ffmpeg 5.1 CLI's autorotate (fftools get_rotation and
// configure_input_video_filter), so frames match `ffmpeg -i V` exactly: the same angle rounding, the same
// transpose/hflip/vflip choices, including reflections. m is the 3x3 display matrix (16.16 fixed point,
// row-major, as stored in the container); nil means no matrix.
func orientationFromMatrix(m *[9]int32) Orientation {
	if m == nil {
		return Orientation{}
	}
	r := displayRotationGet(m)
	if math.IsNaN(r) {
		return Orientation{} // a degenerate matrix: the CLI inserts no filter either
	}
	theta := -math.Round(r)
	theta -= 360 * math.Floor(theta/360+0.9/360)
	o := Orientation{}
	switch {
	case math.Abs(theta-90) < 1:
		if m[3] > 0 {
			o.filter, o.RotationDeg, o.VFlip = "transpose=cclock_flip", 270, true
		} else {
			o.filter, o.RotationDeg = "transpose=clock", 90
		}
	case math.Abs(theta-180) < 1:
		var fs []string
		if m[0] < 0 {
			fs, o.HFlip = append(fs, "hflip"), true
		}
		if m[4] < 0 {
			fs, o.VFlip = append(fs, "vflip"), true
		}
		if o.HFlip && o.VFlip {
			o.RotationDeg, o.HFlip, o.VFlip = 180, false, false
		}
		o.filter = strings.Join(fs, ",")
	case math.Abs(theta-270) < 1:
		if m[3] < 0 {
			o.filter, o.RotationDeg, o.VFlip = "transpose=clock_flip", 90, true
		} else {
			o.filter, o.RotationDeg = "transpose=cclock", 270
		}
	case math.Abs(theta) > 1:
		o.filter, o.RotationDeg = fmt.Sprintf("rotate=%f*PI/180", theta), int(theta)
	default:
		if m[4] < 0 {
			o.filter, o.VFlip = "vflip", true
		}
	}
	return o
}

// displayRotationGet is libavutil's av_display_rotation_get: the counterclockwise angle in degrees.
func displayRotationGet(m *[9]int32) float64 {
	conv := func(x int32) float64 { return float64(x) / (1 << 16) }
	scale0 := math.Hypot(conv(m[0]), conv(m[3]))
	scale1 := math.Hypot(conv(m[1]), conv(m[4]))
	if scale0 == 0 || scale1 == 0 {
		return math.NaN()
	}
	rotation := math.Atan2(conv(m[1])/scale1, conv(m[0])/scale0) * 180 / math.Pi
	return -rotation
}
