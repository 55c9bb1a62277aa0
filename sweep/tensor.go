package sweep

import (
	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/resize/geom"
)

// adoptTensorInput makes the sweep build a tensor runtime's input (llm.TensorInput, onnx) as the
// runtime describes it, so that the tensor whose sha256 a record stores as input_sha256 is the one
// the model consumes: the runtime's kernel, dtype, norm and layout become the engine's options, and
// every visual config of the grid must already be at the runtime's geometry (the grid names it, so
// config ids and cache keys say what was fed; a config at another resolution is an error naming it,
// never silently resized). A runtime that takes frames leaves the options as they are.
func (o *Options) adoptTensorInput() error {
	ti, ok := o.Runtime.(llm.TensorInput)
	if !ok {
		return nil
	}
	spec := ti.Input()
	want, err := geom.Parse(spec.Geometry)
	if err != nil {
		return optErr("runtime %s: its input geometry %q: %v", o.Spec.Engine, spec.Geometry, err)
	}
	for i := range o.Grid.Configs {
		c := &o.Grid.Configs[i]
		if c.TextOnly {
			continue
		}
		if g := c.Geometry(); g == nil || g.String() != want.String() {
			return optErr("grid config %s: resolution %q, but the %s runtime takes a tensor at %s: set resolutions: [%q] in the grid", c.ID, c.Resolution, o.Spec.Engine, want.String(), want.String())
		}
	}
	o.Input.Kernel, o.Input.DType, o.Input.Norm, o.Input.Layout = spec.Kernel, cache.DType(spec.DType), spec.Norm, spec.Layout
	return nil
}
