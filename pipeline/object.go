package pipeline

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/internal/version"
	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/rgb"
)

// Format names the stored-object format in every object's metadata.
const Format = "framesweep.frames/1"

// An object is a safetensors file: the frames tensor (Job.Shape, Job.DType) and an I64 "indices"
// tensor, laid out in name order after the header, with the provenance in the header's metadata.
// ObjectHeader ‖ frames data ‖ IndicesData(j) is the whole file.

// ObjectMetadata is the provenance an object carries (docs/pipeline.md lists every key).
func ObjectMetadata(r *Result) map[string]string {
	j, info := r.Job, r.Video.Info
	if j.Loader != nil {
		info = j.Loader.Info // the video as the loader's reader opened it: its stream, time base, rotation
	}
	n := j.Frames()
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	pts := make([]float64, n)
	for i, p := range r.PTS {
		pts[i] = float64(p) * info.TimeBase.Float64()
	}
	libs := Libraries()
	fh := "null"
	if info.FramesHeader != nil {
		fh = strconv.FormatInt(*info.FramesHeader, 10)
	}
	meta := map[string]string{
		"format":           Format,
		"key":              j.Key,
		"key_spec":         string(j.Spec.Canonical()),
		"engine":           version.Engine,
		"source_path":      r.Video.Path,
		"source_sha256":    j.Spec.VideoSHA256,
		"config":           j.Config.ID,
		"sampler":          j.Selection.Name(),
		"indices":          js(j.Selection.Indices),
		"pts":              js(r.PTS),
		"pts_s":            js(pts),
		"time_base":        fmt.Sprintf("%d/%d", info.TimeBase.Num, info.TimeBase.Den),
		"frames":           strconv.Itoa(info.Frames),
		"frames_header":    fh,
		"rotation":         strconv.Itoa(info.Rotation),
		"rotation_applied": strconv.FormatBool(j.Spec.Autorotate && !info.Orientation.IsIdentity()),
		"orientation":      info.Orientation.Filter(),
		"codec":            info.Codec,
		"stream_index":     strconv.Itoa(info.StreamIndex),
		"damaged":          js(nonNil(r.Damaged)),
		"decoder":          "libavcodec " + libs["libavcodec"] + ", libswscale " + libs["libswscale"] + " (FFmpeg " + version.FFmpeg + " via go-astiav " + version.GoAstiav + ")",
		"opencv":           libs["opencv"] + " via gocv " + version.Gocv,
		"libraries":        js(libs),
		"geometry":         j.Geometry,
		"layout":           js(j.Layout),
		"kernel":           j.Spec.Kernel,
		"dispatch_level":   native.CurrentLevel().String(),
		"pipeline":         j.Pipeline,
		"dtype":            string(j.DType),
		"norm":             j.Norm,
		"tensor_layout":    j.Spec.Layout,
	}
	if j.Loader != nil {
		loaderMetadata(meta, j.Loader)
	}
	if j.Images > 1 {
		meta["images_per_frame"] = strconv.Itoa(j.Images)
	}
	if j.Pipeline == cache.PipelineCached {
		meta["jpeg_quality"] = strconv.Itoa(resize.PillowJPEGQuality)
		meta["jpeg_subsampling"] = "4:2:0"
		meta["jpeg_codec"] = "libjpeg-turbo via OpenCV " + libs["opencv"] + " (byte-identical to Pillow's default save)"
		meta["psnr_db"] = js(r.PSNR)
	}
	return meta
}

func nonNil(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

// ObjectHeader is the canonical safetensors header of r's object.
func ObjectHeader(r *Result) ([]byte, error) {
	j := r.Job
	return cache.EncodeHeader([]cache.TensorHeader{
		{Name: "frames", DType: j.DType, Shape: j.Shape()},
		{Name: "indices", DType: cache.I64, Shape: []int{j.Frames()}},
	}, ObjectMetadata(r))
}

// IndicesData is the indices tensor's bytes: the plan's indices as little-endian int64.
func IndicesData(j *Job) []byte {
	b := make([]byte, 0, 8*j.Frames())
	for _, x := range j.Selection.Indices {
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(x)))
	}
	return b
}

// Input is a stored object read back: exactly what the model is fed, with its provenance.
type Input struct {
	Key      string
	Config   string
	Pipeline string
	Indices  []int     // plan order
	PTS      []int64   // stream time base
	PTSS     []float64 // seconds
	Images   int       // images per frame (tiles + thumbnail, or 1)
	Tensor   cache.Tensor
	Meta     map[string]string
	// Frames are the uint8 images in tensor order (frame-major; tiles then thumbnail), aliasing
	// Tensor.Data; nil for float tensors (use Tensor).
	Frames []*rgb.Image
}

// ReadInput checks that f is a framesweep object and returns its input.
func ReadInput(f *cache.File) (*Input, error) {
	m := f.Metadata
	if m["format"] != Format {
		return nil, fmt.Errorf("%w: not a %s object (format %q)", cache.ErrBadSpec, Format, m["format"])
	}
	t, ok := f.Tensors["frames"]
	if !ok {
		return nil, fmt.Errorf("%w: no frames tensor", cache.ErrBadSpec)
	}
	in := &Input{Key: m["key"], Config: m["config"], Pipeline: m["pipeline"], Tensor: t, Meta: m, Images: 1}
	for k, dst := range map[string]any{"indices": &in.Indices, "pts": &in.PTS, "pts_s": &in.PTSS} {
		if err := json.Unmarshal([]byte(m[k]), dst); err != nil {
			return nil, fmt.Errorf("%w: metadata %s: %v", cache.ErrBadSpec, k, err)
		}
	}
	if len(t.Shape) == 5 {
		in.Images = t.Shape[1]
	}
	if len(t.Shape) < 4 || t.Shape[0] != len(in.Indices) || len(in.PTS) != len(in.Indices) {
		return nil, fmt.Errorf("%w: frames %v for %d indices, %d pts", cache.ErrBadSpec, t.Shape, len(in.Indices), len(in.PTS))
	}
	if t.DType == cache.U8 {
		imgs, err := f.Images("frames")
		if err != nil {
			return nil, err
		}
		in.Frames = imgs
	}
	return in, nil
}

// LoadInput reads key's object from s (the whole object, re-hashed) and returns its input.
func LoadInput(ctx context.Context, s *cache.Store, key string) (*Input, cache.Ref, error) {
	f, ref, err := s.Load(ctx, key)
	if err != nil {
		return nil, ref, err
	}
	in, err := ReadInput(f)
	if err != nil {
		return nil, ref, &cache.Error{Path: s.ObjectPath(ref.Digest), Op: "read input", Err: err}
	}
	return in, ref, nil
}
