package pipeline

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
	"github.com/framesweep/framesweep/sampler"
)

// ImagesTensor is the engine's per-frame path for images that are not frames of a video (a test's
// rendered text line, a tool's own pictures): each image is laid out by g as a frame of its size
// would be (len(images) frames sampled), resized with o's kernel and converted to o's dtype, norm and
// tensor layout — byte for byte what Run writes for a decoded frame with these pixels. The images
// must give one image size; the tensor's shape is Job.Shape's for len(images) frames.
func ImagesTensor(images []*rgb.Image, g geom.Geometry, o Options) ([]byte, []int, error) {
	ro, err := o.resolve()
	if err != nil {
		return nil, nil, err
	}
	if len(images) == 0 {
		return nil, nil, fmt.Errorf("%w: no images", ErrOptions)
	}
	var first *Job
	var data []byte
	ws := &scratch{}
	for i, img := range images {
		v := Video{Info: decode.Info{OutWidth: img.W, OutHeight: img.H}}
		lay, err := layoutFor(g, v.Info, len(images))
		if err != nil {
			return nil, nil, fmt.Errorf("image %d (%dx%d): %w", i, img.W, img.H, err)
		}
		j := ro.newJob(&framesConfig, cache.PipelineRaw, ro.keySpec(v, g, []int{i}, cache.PipelineRaw), sampleOf(i), g, lay)
		if first == nil {
			first = j
		} else if j.Width != first.Width || j.Height != first.Height || j.Images != first.Images {
			return nil, nil, fmt.Errorf("image %d: %d image(s) of %dx%d, image 0 gave %d of %dx%d: they cannot share a tensor", i, j.Images, j.Width, j.Height, first.Images, first.Width, first.Height)
		}
		outs, err := resize.FanOut(img, resize.LayoutTargets(lay, ro.Kernel))
		if err != nil {
			return nil, nil, fmt.Errorf("image %d: %w", i, err)
		}
		var thumb *rgb.Image
		if len(outs) > 1 {
			thumb = outs[1]
		}
		if data, err = render(j, outs[0], thumb, data, ws); err != nil {
			return nil, nil, fmt.Errorf("image %d: %w", i, err)
		}
	}
	shape := first.Shape()
	shape[0] = len(images)
	return data, shape, nil
}

// sampleOf is the one-frame plan of image i.
func sampleOf(i int) sampler.Selection {
	return sampler.Selection{Policy: "images", Indices: []int{i}, TimestampsS: []float64{0}}
}

// Float32s reads a little-endian float32 tensor's bytes (an F32 object's Data) as values: what a
// runtime that takes the tensor itself is handed (llm.Tensor), the bytes DataSHA256 hashes.
func Float32s(data []byte) ([]float32, error) {
	if len(data)%4 != 0 {
		return nil, fmt.Errorf("%w: %d bytes are not float32 values", cache.ErrBadSpec, len(data))
	}
	out := make([]float32, len(data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out, nil
}
