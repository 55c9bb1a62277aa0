package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/sampler"
)

// Request is the JSON body of POST /v1/plan and POST /v1/frames: the video and the fields of one grid
// configuration (field for field as a grid file names them, docs/sampler.md), plus the pipeline
// options `framesweep extract` takes as flags. Omitted fields are the grid's and extract's defaults.
type Request struct {
	Video  string `json:"video"`            // a path under a --root (relative, or absolute inside one)
	Preset string `json:"preset,omitempty"` // exactly one of preset, policy or a harness loader
	Policy string `json:"policy,omitempty"` //
	// Loader is a harness loader (docs/loaders.md; /v1/health lists them): its reader picks, decodes
	// and converts the frames ("framesweep", framesweep's own reading, is the same as none).
	Loader     string  `json:"loader,omitempty"`
	Frames     int     `json:"frames,omitempty"`     // frame budget (one of frames or sample_fps; neither = the sampler's default)
	SampleFPS  float64 `json:"sample_fps,omitempty"` // fps mode
	Seed       uint64  `json:"seed,omitempty"`       // random policies only (ignored by the others, as in a grid)
	Resolution string  `json:"resolution,omitempty"` // geometry spec; omitted = as in a grid (a preset's own geometry; a policy's source size)
	Pipeline   string  `json:"pipeline,omitempty"`   // raw (default) | cached
	// The grid's options: block.
	MinFrames   int    `json:"min_frames,omitempty"`
	MaxFrames   int    `json:"max_frames,omitempty"`
	ForceLast   bool   `json:"force_last,omitempty"`
	ForceSample bool   `json:"force_sample,omitempty"`
	Torch       string `json:"torch,omitempty"`
	// qwen-vl-utils loaders: fetch_video's element keys (the grid's options: too).
	ImagePatchSize int     `json:"image_patch_size,omitempty"`
	MinPixels      float64 `json:"min_pixels,omitempty"`
	MaxPixels      float64 `json:"max_pixels,omitempty"`
	TotalPixels    float64 `json:"total_pixels,omitempty"`
	// extract's flags.
	Kernel       string `json:"kernel,omitempty"` // resize kernel (default pil-bicubic)
	DType        string `json:"dtype,omitempty"`  // u8 (default) | f32 | f16
	Norm         string `json:"norm,omitempty"`   // float dtypes only: clip (default) | imagenet | half | unit
	Stream       *int   `json:"stream,omitempty"` // video stream index; omitted = FFmpeg's best video stream
	NoAutorotate bool   `json:"no_autorotate,omitempty"`
	OnDamaged    string `json:"on_damaged,omitempty"` // fail (default) | keep
	// Format of POST /v1/frames: safetensors (default) | npy; the query parameter format= overrides it.
	Format string `json:"format,omitempty"`
}

// Formats of POST /v1/frames.
const (
	FormatSafetensors = "safetensors"
	FormatNPY         = "npy"
)

// maxPathBytes bounds the video name (PATH_MAX on Linux).
const maxPathBytes = 4096

// spec is a validated request: the config a one-config grid with these values holds (same id, plan
// and geometry as extract's) and the pipeline options extract's flags would set.
type spec struct {
	req    Request
	config grid.Config
	opts   pipeline.Options
}

// requestKeys are Request's JSON keys, exactly.
var requestKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[Request]()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys[name] = true
	}
	return keys
}()

// DecodeRequest parses a request body strictly: one JSON object, known fields only, each key once and
// spelt exactly (encoding/json would take "frames":8,"frames":16 as 16 and "Frames" or "FRAMES" as
// frames: the record and items validators refuse such text too, record.CheckJSON), typed values
// (frames 8.5 is an error, not 8), nothing after it. The error is a 400 *Error.
func DecodeRequest(body []byte) (*Request, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, badRequest("the body must be one JSON object")
	}
	if err := record.CheckJSON(body); err != nil {
		return nil, badRequest("bad JSON body: %v", strings.TrimPrefix(err.Error(), record.ErrSyntax.Error()+": "))
	}
	var top map[string]json.RawMessage
	if json.NewDecoder(bytes.NewReader(body)).Decode(&top) == nil {
		keys := make([]string, 0, len(top))
		for k := range top {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !requestKeys[k] {
				return nil, badRequest("bad JSON body: unknown field %q (the fields are lower case, e.g. \"frames\")", k)
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var r Request
	if err := dec.Decode(&r); err != nil {
		return nil, badRequest("bad JSON body: %v", jsonErr(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badRequest("bad JSON body: data after the object")
	}
	return &r, nil
}

// jsonErr strips encoding/json's "json: " prefix.
func jsonErr(err error) string { return strings.TrimPrefix(err.Error(), "json: ") }

// spec validates r and builds its config and options; every error is a 400 *Error.
func (r *Request) spec() (*spec, error) {
	if err := r.checkVideo(); err != nil {
		return nil, err
	}
	loaderReq := r.Loader != "" && r.Loader != grid.DefaultLoader
	switch {
	case loaderReq && (r.Preset != "" || r.Policy != ""):
		return nil, badRequest("loader %s picks the frames itself: give a loader or a preset or a policy, not both", r.Loader)
	case loaderReq && (r.Stream != nil || r.NoAutorotate || r.OnDamaged != ""):
		return nil, badRequest("loader %s reads the video as its harness does: stream, no_autorotate and on_damaged do not apply", r.Loader)
	case !loaderReq && (r.Preset == "") == (r.Policy == ""):
		return nil, badRequest("give exactly one of preset, policy or loader")
	case r.Frames != 0 && r.SampleFPS != 0:
		return nil, badRequest("give frames or sample_fps, not both (one grid configuration has one budget)")
	case r.Stream != nil && (*r.Stream < 0 || *r.Stream > 1<<16):
		return nil, badRequest("stream %d: want a stream index ≥ 0", *r.Stream)
	}
	switch sampler.Torch(r.Torch) {
	case "", sampler.Torch2, sampler.Torch2NoFMA, sampler.Torch113AVX2, sampler.Torch113AVX512:
	default:
		return nil, badRequest("torch: unknown torch variant %q (want 2, 2-nofma, 1.13-avx2 or 1.13-avx512)", r.Torch)
	}
	switch r.Format {
	case "", FormatSafetensors, FormatNPY:
	default:
		return nil, badRequest("format %q: want safetensors or npy", r.Format)
	}
	sp := &spec{req: *r}
	o := &sp.opts
	switch strings.ToLower(r.DType) {
	case "", "u8":
		o.DType = cache.U8
		if r.Norm != "" && r.Norm != "none" {
			return nil, badRequest("norm %q applies to float dtypes only (dtype is u8)", r.Norm)
		}
	case "f32":
		o.DType, o.Norm = cache.F32, r.Norm
	case "f16":
		o.DType, o.Norm = cache.F16, r.Norm
	default:
		return nil, badRequest("dtype %q: want u8, f32 or f16", r.DType)
	}
	o.Kernel, o.NoAutorotate, o.Stream = r.Kernel, r.NoAutorotate, r.Stream
	p, err := decode.ParseDamagePolicy(r.OnDamaged)
	if err != nil {
		return nil, badRequest("on_damaged: %v", err)
	}
	o.OnDamaged = p
	if err := o.Check(); err != nil {
		return nil, badRequest("%v", strings.TrimPrefix(err.Error(), pipeline.ErrOptions.Error()+": "))
	}
	name := r.Preset + r.Policy
	req := sampler.Request{Frames: r.Frames, SampleFPS: r.SampleFPS, Seed: r.Seed, MinFrames: r.MinFrames,
		MaxFrames: r.MaxFrames, ForceLast: r.ForceLast, ForceSample: r.ForceSample, Torch: sampler.Torch(r.Torch)}
	lo := grid.LoaderOptions{ImagePatchSize: r.ImagePatchSize, MinPixels: r.MinPixels, MaxPixels: r.MaxPixels, TotalPixels: r.TotalPixels}
	if loaderReq {
		if r.Pipeline != "" && r.Pipeline != grid.PipelineRaw {
			return nil, badRequest("loader %s: pipeline %q (a loader's frames are its reader's own, JPEG step included: raw only)", r.Loader, r.Pipeline)
		}
		c, err := grid.OneLoader(r.Loader, req, lo, r.Resolution)
		if err != nil {
			return nil, badRequest("%v", err)
		}
		sp.config = c
		return sp, nil
	}
	if lo != (grid.LoaderOptions{}) {
		return nil, badRequest("image_patch_size, min_pixels, max_pixels and total_pixels are qwen-vl-utils loader options")
	}
	c, err := grid.One(name, req, r.Resolution, r.Pipeline)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	if r.Preset != "" && c.Preset == "" {
		return nil, badRequest("preset %q: no such preset (%q is a policy: send it as policy)", name, name)
	}
	if r.Policy != "" && c.Policy == "" {
		return nil, badRequest("policy %q: no such policy (%q is a preset: send it as preset)", name, name)
	}
	sp.config = c
	return sp, nil
}

// checkVideo checks the video name's form (where it leads is roots.resolve's business).
func (r *Request) checkVideo() error {
	switch {
	case r.Video == "":
		return badRequest("video is required")
	case len(r.Video) > maxPathBytes:
		return badRequest("video: the name is longer than %d bytes", maxPathBytes)
	case strings.IndexByte(r.Video, 0) >= 0:
		return badRequest("video: the name contains a NUL byte")
	}
	return nil
}

// format is the response format: the query parameter, else the body's field, else safetensors.
func (sp *spec) format(query string) (string, error) {
	switch query {
	case "":
		if sp.req.Format == "" {
			return FormatSafetensors, nil
		}
		return sp.req.Format, nil
	case FormatSafetensors, FormatNPY:
		return query, nil
	}
	return "", badRequest("format %q: want safetensors or npy", query)
}

// isRequestErr reports whether a sampler error is the request's fault (400) rather than the video's (422).
func isRequestErr(err error) bool {
	return errors.Is(err, sampler.ErrRequest) || errors.Is(err, sampler.ErrUnknown) || errors.Is(err, grid.ErrGrid) ||
		errors.Is(err, loader.ErrRequest) || errors.Is(err, loader.ErrUnknown)
}
