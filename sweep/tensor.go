package sweep

import (
	"fmt"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/resize/geom"
)

// AdoptTensorInput is the one rule of a tensor runtime's input (llm.TensorInput, onnx), for the sweep
// and `framesweep ask` alike: the input is built as the runtime describes it, so that the tensor whose
// sha256 a record stores as input_sha256 is the one the model consumes. The runtime's kernel, dtype,
// norm and layout become the engine's options; every visual config must already be at the runtime's
// geometry (the grid, or ask's --resolution, names it, so config ids and cache keys say what was fed:
// a config at another resolution is an error naming it, never silently resized), and a kernel o
// names must be the runtime's. A runtime that takes frames leaves o as it is. The error is an
// *OptionsError naming the flag or the grid key to change.
func AdoptTensorInput(rt llm.Runtime, engine string, configs []grid.Config, o pipeline.Options) (pipeline.Options, error) {
	ti, ok := rt.(llm.TensorInput)
	if !ok {
		return o, nil
	}
	spec := ti.Input()
	want, err := geom.Parse(spec.Geometry)
	if err != nil {
		return o, optErr("runtime %s: its input geometry %q: %v", engine, spec.Geometry, err)
	}
	for i := range configs {
		c := &configs[i]
		if c.TextOnly {
			continue
		}
		if g := c.Geometry(); g == nil || g.String() != want.String() {
			return o, optErr("config %s: resolution %q, but the %s runtime takes a tensor at %s: set resolutions: [%q] in the grid (ask: --resolution %s, or none)",
				c.ID, c.Resolution, engine, want.String(), want.String(), want.String())
		}
	}
	if o.Kernel != "" && o.Kernel != spec.Kernel {
		return o, optErr("--kernel %s: the %s runtime takes a tensor resized with %s (give none, or that one)", o.Kernel, engine, spec.Kernel)
	}
	o.Kernel, o.DType, o.Norm, o.Layout = spec.Kernel, cache.DType(spec.DType), spec.Norm, spec.Layout
	return o, nil
}

// TensorGeometry is the geometry a tensor runtime takes its input at ("" for a runtime that takes
// frames): what ask's config is built at when its flags name none.
func TensorGeometry(rt llm.Runtime) string {
	if ti, ok := rt.(llm.TensorInput); ok {
		return ti.Input().Geometry
	}
	return ""
}

// adoptTensorInput applies AdoptTensorInput to the sweep's options.
func (o *Options) adoptTensorInput() error {
	in, err := AdoptTensorInput(o.Runtime, o.Spec.Engine, o.Grid.Configs, o.Input)
	if err != nil {
		return fmt.Errorf("%s: %w", o.GridPath, err)
	}
	o.Input = in
	return nil
}
