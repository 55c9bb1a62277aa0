package sampler_test

import (
	"fmt"

	"github.com/framesweep/framesweep/sampler"
)

func ExampleLookup() {
	s, _ := sampler.Lookup("qwen3-vl")
	p, _ := s.Select(sampler.Video{Frames: 300, FPS: 30}, sampler.Request{}) // default 2 fps
	fmt.Println(p.Indices[:4], p.TimestampStrings[:3])
	// Output: [0 16 31 47] [<0.3 seconds> <1.3 seconds> <2.4 seconds>]
}
