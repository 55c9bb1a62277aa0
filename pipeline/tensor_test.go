package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
)

// runFrames builds r's frames of the NASA clip under o and returns the object.
func runFrames(t *testing.T, r FrameRequest, o Options) *Object {
	t.Helper()
	v, src := openTest(t, "nasa_13013.mp4", Options{})
	j, err := PlanFrames(v, r, o)
	if err != nil {
		t.Fatal(err)
	}
	var obj *Object
	if _, jerrs, err := Run(context.Background(), v, src, []*Job{j}, &MemorySink{Done: func(o *Object) error { obj = o; return nil }}); err != nil || len(jerrs) > 0 {
		t.Fatal(err, jerrs)
	}
	return obj
}

// TestTensorLayoutAndPad: an NCHW float tensor is the NHWC one with its axes moved (and a key of its
// own); a padded layout's padding is 0 in every dtype, its image part the normalised resize; NCHW is
// refused for uint8.
func TestTensorLayoutAndPad(t *testing.T) {
	req := FrameRequest{Indices: []int{3, 200}, Geometry: geom.PadRight{W: 96, H: 24}}
	base := Options{Kernel: resize.CVLinear, DType: cache.F32, Norm: "half"}
	nhwc := runFrames(t, req, base)
	nchwOpts := base
	nchwOpts.Layout = "NCHW"
	nchw := runFrames(t, req, nchwOpts)
	u8 := runFrames(t, req, Options{Kernel: resize.CVLinear})
	if fmt.Sprint(nchw.Result.Job.Shape()) != "[2 3 24 96]" || fmt.Sprint(nhwc.Result.Job.Shape()) != "[2 24 96 3]" {
		t.Fatalf("shapes %v %v", nchw.Result.Job.Shape(), nhwc.Result.Job.Shape())
	}
	a, _ := Float32s(nhwc.Data)
	b, _ := Float32s(nchw.Data)
	const h, w = 24, 96
	rw := nhwc.Result.Job.Layout.Resize.W // 480x270 → ⌈24·16/9⌉ = 43
	if rw != 43 {
		t.Fatalf("resize width %d", rw)
	}
	for n := 0; n < 2; n++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				for c := 0; c < 3; c++ {
					va := a[((n*h+y)*w+x)*3+c]
					vb := b[((n*3+c)*h+y)*w+x]
					pix := u8.Data[((n*h+y)*w+x)*3+c]
					if va != vb {
						t.Fatalf("frame %d (%d,%d,%d): NHWC %v, NCHW %v", n, x, y, c, va, vb)
					}
					if want := (float32(pix)/255 - 0.5) / 0.5; x < rw && abs32(va-want) > 1e-6 {
						t.Fatalf("(%d,%d,%d): %v, want norm(%d) = %v", x, y, c, va, pix, want)
					}
					if x >= rw && (va != 0 || pix != 0) {
						t.Fatalf("padding (%d,%d,%d) is %v / %d, want 0", x, y, c, va, pix)
					}
				}
			}
		}
	}
	if nchw.Result.Job.Spec.Key() == nhwc.Result.Job.Spec.Key() || ObjectMetadata(nchw.Result)["tensor_layout"] != "NCHW" {
		t.Error("the tensor layout is not in the key or the metadata")
	}
	f16 := nchwOpts
	f16.DType = cache.F16
	if o := runFrames(t, req, f16); !bytes.Equal(o.Data[2*rw:2*w], make([]byte, 2*(w-rw))) {
		t.Error("float16 padding is not 0")
	}
	if _, err := PlanFrames(Video{}, req, Options{Layout: "NCHW"}); !errors.Is(err, ErrOptions) {
		t.Errorf("NCHW uint8: %v", err)
	}
	if _, err := PlanFrames(Video{}, req, Options{DType: cache.F32, Layout: "CHW"}); !errors.Is(err, ErrOptions) {
		t.Errorf("layout CHW: %v", err)
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// TestImagesTensor: images handed in directly go through the same path as decoded frames: the
// source-size frames of the clip give, under a geometry, dtype and layout, the tensor Run builds
// from the video itself.
func TestImagesTensor(t *testing.T) {
	idx := []int{0, 120, 389}
	src := runFrames(t, FrameRequest{Indices: idx}, Options{}) // the decoded frames, exactly
	in, err := src.Input()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{
		{},
		{Kernel: resize.CVLinear, DType: cache.F32, Norm: "mean=0.5,std=0.5", Layout: "NCHW"},
		{DType: cache.F16, Norm: "imagenet"},
	} {
		for _, g := range []geom.Geometry{geom.PadRight{W: 192, H: 48}, geom.Fixed{W: 64, H: 40}, mustGeom(t, "lmms-eval/internvl3")} {
			want := runFrames(t, FrameRequest{Indices: idx, Geometry: g}, o)
			data, shape, err := ImagesTensor(in.Frames, g, o)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, want.Data) || fmt.Sprint(shape) != fmt.Sprint(want.Result.Job.Shape()) {
				t.Errorf("%s %+v: %d bytes %v, Run %d bytes %v", g, o, len(data), shape, len(want.Data), want.Result.Job.Shape())
			}
		}
	}
	if _, _, err := ImagesTensor([]*rgb.Image{rgb.New(8, 8), rgb.New(16, 4)}, geom.Native{}, Options{}); err == nil {
		t.Error("images of two sizes made one tensor")
	}
}

func mustGeom(t *testing.T, spec string) geom.Geometry {
	t.Helper()
	g, err := geom.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestParseNorm: names, values equal to a name (the name is what the key records), other values
// spelled out canonically, and refusals.
func TestParseNorm(t *testing.T) {
	for in, want := range map[string]string{
		"clip": "clip", "half": "half", "mean=0.5,std=0.5": "half", "mean=0.5|0.5|0.5,std=0.5": "half",
		"std=1,mean=0": "unit", "mean=0.25|0.5|0.75,std=0.2": "mean=0.25|0.5|0.75,std=0.2|0.2|0.2",
	} {
		got, _, err := ParseNorm(in)
		if err != nil || got != want {
			t.Errorf("ParseNorm(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"zscore", "mean=0.5", "mean=0.5,std=0", "mean=a,std=1", "mean=1|2,std=1", "mean=0,std=1,scale=2", "mean=nan,std=1"} {
		if _, _, err := ParseNorm(bad); !errors.Is(err, ErrOptions) {
			t.Errorf("ParseNorm(%q): %v, want ErrOptions", bad, err)
		}
	}
}
