// Package loader describes the video readers of evaluation harnesses and model stacks, and the rules
// by which each picks the frames it hands a model: which stream, whether it rotates, its colour
// conversion, where its frame count comes from, its container quirks and fallbacks (DESIGN.md "Frame
// semantics", "Harness loaders"). It is pure Go (it builds with CGO_ENABLED=0); loader/load runs a
// loader on a video through decode and resize.
//
// framesweep's own exact mode (the "framesweep" loader: FFmpeg's best stream, rotation applied, the
// ffmpeg CLI's colours, frames counted by the demux scan) stays the default for its grids; a harness
// loader is asked for by name to reproduce what that harness's model saw.
package loader

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/sampler"
)

// Loader names.
const (
	Framesweep           = "framesweep"
	LmmsEval             = "lmms-eval"
	LmmsEvalTorchcodec   = "lmms-eval/torchcodec"
	QwenVLUtils          = "qwen-vl-utils" // its torchvision reader
	QwenVLUtilsDecord    = "qwen-vl-utils/decord"
	QwenVLUtilsTorchcode = "qwen-vl-utils/torchcodec"
	VLMEvalKit           = "vlmevalkit"
)

// Stream rules.
const (
	StreamFirst = "video[0]" // the first video stream in file order (PyAV's container.streams.video[0])
	StreamBest  = "best"     // FFmpeg's av_find_best_stream (torchcodec, decord, framesweep)
)

// Frame-count sources.
const (
	CountHeader  = "header"  // the container's nb_frames (PyAV's stream.frames)
	CountDecoded = "decoded" // the frames the reader decoded (torchvision: len of what read_video returns)
	CountIndex   = "index"   // a demux scan of every packet (framesweep; torchcodec's exact seek mode)
	CountDecord  = "decord"  // decord's len(vr): nb_frames, else avg_fps × container duration
)

// Colour conversions, as decode.ColourMode names them.
const (
	ColourStream         = "stream"          // the ffmpeg CLI's conversion: the frame's matrix and range
	ColourSwsDefault     = "sws-default"     // PyAV's to_ndarray("rgb24"): BT.601, range from the pixel format
	ColourFilterBilinear = "filter-bilinear" // decord's scale=W:H filter graph, the frame's matrix
)

// Spec describes one loader: what the harness's reader does, with the upstream source it was read
// from. Verified says whether the loader is checked here against the upstream code itself, run as an
// oracle (../shared/oracles), byte for byte; otherwise it is written from the upstream source.
type Spec struct {
	Name        string   `json:"name"`
	Harness     string   `json:"harness"`
	Reader      string   `json:"reader"`
	Upstream    []string `json:"upstream"` // repo@commit path (function)
	Stream      string   `json:"stream"`
	Autorotate  bool     `json:"autorotate"`
	Colour      string   `json:"colour"`
	Count       string   `json:"count"`
	Rate        string   `json:"rate"`                   // where the fps the rules use comes from
	Threads     string   `json:"threads"`                // the decoder's thread type
	Resize      string   `json:"resize,omitempty"`       // what the reader's caller resizes with
	JPEGQuality int      `json:"jpeg_quality,omitempty"` // frames stored as JPEG and read back
	Budget      string   `json:"budget"`                 // what Request.Frames / SampleFPS mean
	Verified    bool     `json:"verified"`
	VerifiedBy  string   `json:"verified_by,omitempty"`
	Quirks      []string `json:"quirks,omitempty"`
}

// Request is what the caller asks of a loader. Zero values mean the loader's default. Its JSON (zero
// fields omitted) is canonical: cache keys name a loader's request by it.
type Request struct {
	Frames    int     `json:"frames,omitempty"`     // lmms-eval num_frm, qwen-vl-utils nframes, VLMEvalKit nframe
	SampleFPS float64 `json:"sample_fps,omitempty"` // lmms-eval fps, qwen-vl-utils fps, VLMEvalKit fps
	ForceLast bool    `json:"force_last,omitempty"` // lmms-eval force_include_last_frame
	// qwen-vl-utils element keys (0 = unset): min_frames/max_frames (fps mode), min_pixels,
	// max_pixels, total_pixels; ImagePatchSize is fetch_video's image_patch_size (14, or 16 for
	// Qwen3-VL as lmms-eval and the Qwen3-VL README call it).
	MinFrames      int     `json:"min_frames,omitempty"`
	MaxFrames      int     `json:"max_frames,omitempty"`
	MinPixels      float64 `json:"min_pixels,omitempty"`
	MaxPixels      float64 `json:"max_pixels,omitempty"`
	TotalPixels    float64 `json:"total_pixels,omitempty"`
	ImagePatchSize int     `json:"image_patch_size,omitempty"`
	// Torch is the torch.linspace kernel qwen-vl-utils' indices come from ("" = sampler.Torch2;
	// Debian's torch 1.13 is sampler.Torch113AVX2). It changes indices only on long videos.
	Torch sampler.Torch `json:"torch,omitempty"`
}

// Sentinel errors.
var (
	// ErrUnknown: no loader of that name.
	ErrUnknown = errors.New("unknown loader")
	// ErrRequest: the request does not fit the loader (both a budget and an fps where the harness
	// takes one, a negative value).
	ErrRequest = errors.New("invalid loader request")
	// ErrUpstream: the harness itself raises for this video and request (the error says where);
	// the loader reproduces the failure instead of inventing frames.
	ErrUpstream = errors.New("the harness's reader fails here")
)

// Error is a loader failure: the loader, the operation and the cause, one line.
type Error struct {
	Loader string
	Detail string
	Err    error
}

func (e *Error) Error() string { return e.Loader + ": " + e.Detail }
func (e *Error) Unwrap() error { return e.Err }

func errf(sentinel error, loader, format string, a ...any) error {
	return &Error{Loader: loader, Detail: fmt.Sprintf(format, a...), Err: sentinel}
}

// Lookup returns the named loader's description.
func Lookup(name string) (Spec, error) {
	for _, s := range specs {
		if s.Name == name {
			s.Upstream = append([]string(nil), s.Upstream...)
			s.Quirks = append([]string(nil), s.Quirks...)
			return s, nil
		}
	}
	return Spec{}, errf(ErrUnknown, name, "unknown loader (known: %s)", strings.Join(Names(), ", "))
}

// Names lists the loaders, sorted.
func Names() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	sort.Strings(out)
	return out
}

// Catalog returns every loader's description, sorted by name.
func Catalog() []Spec {
	out := make([]Spec, 0, len(specs))
	for _, n := range Names() {
		s, _ := Lookup(n)
		out = append(out, s)
	}
	return out
}

// Check validates a request for a loader (the video-independent part).
func Check(name string, r Request) error {
	s, err := Lookup(name)
	if err != nil {
		return err
	}
	// NaN compares false with everything: without this, min_pixels NaN passed every check below and
	// surfaced as "max_pixels below min_pixels".
	for _, f := range [...]struct {
		key string
		v   float64
	}{{"fps", r.SampleFPS}, {"min_pixels", r.MinPixels}, {"max_pixels", r.MaxPixels}, {"total_pixels", r.TotalPixels}} {
		if err := num.AtLeast(0).Float(f.key, f.v); err != nil {
			return errf(ErrRequest, name, "%v", err)
		}
	}
	switch {
	case r.Frames < 0 || r.SampleFPS < 0 || r.MinFrames < 0 || r.MaxFrames < 0 || r.MinPixels < 0 || r.MaxPixels < 0 || r.TotalPixels < 0 || r.ImagePatchSize < 0:
		return errf(ErrRequest, name, "negative request value")
	case r.Frames > sampler.MaxFrames || r.MaxFrames > sampler.MaxFrames || r.MinFrames > sampler.MaxFrames:
		return errf(ErrRequest, name, "a frame count over %d", sampler.MaxFrames)
	}
	qwen := strings.HasPrefix(s.Name, QwenVLUtils)
	if !qwen && (r.MinFrames != 0 || r.MaxFrames != 0 || r.MinPixels != 0 || r.MaxPixels != 0 || r.TotalPixels != 0 || r.ImagePatchSize != 0 || r.Torch != "") {
		return errf(ErrRequest, name, "min/max frames, pixel budgets, image_patch_size and torch are qwen-vl-utils options")
	}
	if r.ForceLast && s.Name != LmmsEval && s.Name != LmmsEvalTorchcodec {
		return errf(ErrRequest, name, "force_last is lmms-eval's force_include_last_frame")
	}
	if (qwen || s.Name == VLMEvalKit) && r.Frames > 0 && r.SampleFPS > 0 {
		return errf(ErrRequest, name, "give frames or sample fps, not both (upstream refuses both)")
	}
	if qwen && r.ImagePatchSize != 0 && r.ImagePatchSize != 14 && r.ImagePatchSize != 16 {
		return errf(ErrRequest, name, "image_patch_size %d (14 or 16)", r.ImagePatchSize)
	}
	return nil
}
