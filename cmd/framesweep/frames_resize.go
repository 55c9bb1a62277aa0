package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/resize/geom"
)

// resizeFlags are `frames`' --size, --kernel and --preset: the geometry and kernel the engine lays
// each frame out with (frames.go).
type resizeFlags struct {
	size, kernel, preset *string
}

func addResizeFlags(fs *flag.FlagSet) *resizeFlags {
	return &resizeFlags{
		size:   fs.String("size", "", "resize every frame to WxH (e.g. 448x448)"),
		kernel: kernelFlag(fs),
		preset: fs.String("preset", "", "resize with a preset's geometry (resize/geom presets, e.g. qwen2.5-vl)"),
	}
}

// geometry is the layout the flags ask for (nil: the source size) and the kernel; an error is a usage
// error. A preset's geometry is exactly what the model receives: the resize, its centre crop, or the
// tiles followed by the thumbnail.
func (r *resizeFlags) geometry() (geom.Geometry, string, error) {
	kernel := *r.kernel
	if err := extract.CheckKernel(kernel); err != nil {
		return nil, "", err
	}
	switch {
	case *r.size != "" && *r.preset != "":
		return nil, "", errors.New("--size and --preset are mutually exclusive")
	case *r.size != "":
		w, h, err := geom.ParseWxH(*r.size)
		if err != nil {
			return nil, "", fmt.Errorf("--size %q: want WxH with each side 1..%d", *r.size, geom.MaxSide)
		}
		return geom.Fixed{W: w, H: h}, kernel, nil
	case *r.preset != "":
		g, err := geom.ForPreset(*r.preset)
		if err != nil {
			return nil, "", fmt.Errorf("--preset: %v", err)
		}
		return g, kernel, nil
	case *r.kernel != "":
		return nil, "", errors.New("--kernel needs --size or --preset")
	}
	return nil, kernel, nil
}
