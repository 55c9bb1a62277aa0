package onnx

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/rgb"
)

// The channel dimension decides the layout only when it is unambiguous; [N,3,W,3] (NHWC, height 3) must
// not be taken for NCHW, and when dims 1 and 3 are both 3 the spec must say.
func TestLayoutOf(t *testing.T) {
	for _, c := range []struct {
		dims     []int64
		layout   string
		nhwc     bool
		sentinel error // nil: no error
	}{
		{[]int64{1, 3, 224, 224}, "", false, nil},
		{[]int64{1, 224, 224, 3}, "", true, nil},
		{[]int64{-1, 3, 48, -1}, "", false, nil}, // PP-OCR cls: dynamic batch and width
		{[]int64{1, 3, 3, 32}, "", false, nil},   // NCHW, height 3
		{[]int64{1, 32, 3, 3}, "", true, nil},    // NHWC, width 3
		{[]int64{1, 3, 32, 3}, "", false, llm.ErrBadSpec},
		{[]int64{1, 3, 32, 3}, "nhwc", true, nil},
		{[]int64{1, 3, 32, 3}, "nchw", false, nil},
		{[]int64{1, 3, 224, 224}, "nhwc", false, llm.ErrBadSpec}, // the model's dim 3 is 224, not channels
		{[]int64{1, -1, 224, 224}, "nchw", false, nil},           // dynamic channels: the spec decides
		{[]int64{1, -1, 224, 224}, "", false, llm.ErrModel},
		{[]int64{1, 4, 224, 224}, "", false, llm.ErrModel},
		{[]int64{1, 3, 224, 224}, "chw", false, llm.ErrBadSpec},
	} {
		nhwc, err := layoutOf(c.dims, c.layout)
		if c.sentinel != nil {
			if !errors.Is(err, c.sentinel) {
				t.Errorf("%v layout=%q: err %v, want %v", c.dims, c.layout, err, c.sentinel)
			}
			continue
		}
		if err != nil || nhwc != c.nhwc {
			t.Errorf("%v layout=%q: nhwc %v err %v, want nhwc %v", c.dims, c.layout, nhwc, err, c.nhwc)
		}
	}
}

func TestLayoutSpec(t *testing.T) {
	reg := llm.Registry{"onnx": Open}
	if _, err := reg.Open("onnx:model=x.onnx,layout=hwc"); !errors.Is(err, llm.ErrBadSpec) {
		t.Errorf("layout=hwc: %v", err)
	}
	// Numbers of the spec are refused by name before the model is opened: NaN once passed mean=.
	for spec, want := range map[string]string{",mean=NaN": `mean="NaN": NaN: not a number (want -1000000..1000000)`, ",std=0.5|Inf|0.5": "not finite",
		",std=0": "std=0 divides by zero", ",threads=100000": "threads=100000: out of range (want 1..4096)"} {
		if _, err := reg.Open("onnx:model=x.onnx" + spec); !errors.Is(err, llm.ErrBadSpec) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
	// The real PP-OCR classifier is [?,3,?,?]: an explicit layout=nchw agrees with it and answers.
	rt, err := reg.Open("onnx:model=" + modelPath(t) + ",threads=1,size=48x192,layout=nchw")
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.Answer(context.Background(), &llm.Request{Tensors: []llm.Tensor{engineTensor(t, rt, []*rgb.Image{textLine("layout")})}, Question: "q", Options: orientation}); err != nil {
		t.Error(err)
	}
}
