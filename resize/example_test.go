package resize_test

import (
	"fmt"

	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/rgb"
)

// A Resizer is made once per (kernel, source size, output size) and reused for every frame.
func ExampleNew() {
	src := rgb.New(1920, 1080) // a decoded frame
	r, err := resize.New(resize.PILBicubic, src.W, src.H, 448, 448)
	if err != nil {
		panic(err)
	}
	dst := rgb.New(448, 448)
	if err := r.Resize(dst, src); err != nil {
		panic(err)
	}
	fmt.Println(dst.W, dst.H)
	// Output: 448 448
}

// FanOut serves every config's size from one decoded frame.
func ExampleFanOut() {
	src := rgb.New(1280, 720)
	outs, err := resize.FanOut(src, []resize.Target{
		{W: 448, H: 448}, // Pillow bicubic (the default)
		{W: 1008, H: 560, Kernel: resize.TorchBicubic}, // Qwen's torchvision path
		{W: 384, H: 384, Kernel: resize.CVArea},
	})
	if err != nil {
		panic(err)
	}
	for _, o := range outs {
		fmt.Printf("%dx%d\n", o.W, o.H)
	}
	// Output:
	// 448x448
	// 1008x560
	// 384x384
}

func ExampleNew_unknownKernel() {
	_, err := resize.New("bicubic", 640, 480, 224, 224)
	fmt.Println(err)
	// Output: resize: new bicubic: want one of [pil-bicubic pil-bilinear pil-lanczos torch-bicubic cv-area cv-linear cv-cubic]: unknown kernel
}
