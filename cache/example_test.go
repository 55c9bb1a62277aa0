package cache_test

import (
	"context"
	"fmt"
	"os"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/rgb"
)

// Store one 2×1 RGB frame under its key and read it back, verified.
func Example() {
	dir, _ := os.MkdirTemp("", "cache-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := cache.Open(ctx, dir)
	if err != nil {
		panic(err)
	}
	defer s.Close()

	spec := cache.KeySpec{
		VideoSHA256: "9c7a64263694f9084bfa016ccf8f7bccacf0c81f4298f51ae940b63783f5d840", Engine: "example",
		Indices: []int{0}, Geometry: "2x1", Kernel: "pil-bicubic", Layout: "NHWC", Libraries: "libavcodec 59.37.100", Norm: "none",
		Pipeline: cache.PipelineRaw, DType: cache.U8,
	}
	img := rgb.New(2, 1)
	copy(img.Pix, []byte{255, 0, 0, 0, 0, 255})
	frames := cache.Tensor{Name: "frames", DType: cache.U8, Shape: []int{1, 1, 2, 3}, Data: img.Pix}
	obj, _ := cache.EncodeSafetensors([]cache.Tensor{frames, cache.Int64Tensor("indices", spec.Indices)},
		map[string]string{"source_path": "v.mp4"})
	if _, err := s.Put(ctx, spec.Key(), obj); err != nil {
		panic(err)
	}

	f, _, err := s.Load(ctx, spec.Key()) // re-hashed and strictly parsed
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Names(), f.Tensors["frames"].Shape, f.Tensors["frames"].Data, f.Metadata["source_path"])
	// Output: [frames indices] [1 1 2 3] [255 0 0 0 0 255] v.mp4
}
