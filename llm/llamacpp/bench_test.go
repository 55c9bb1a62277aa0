package llamacpp

import (
	"context"
	"testing"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/testmodel"
)

// BenchmarkAsk times one in-process answer of the tiny Qwen2.5-VL model (load excluded): 8 frames of
// 224×168 as its video (4 temporal pairs) and as 8 images, and the question alone; 8 generated tokens,
// greedy, 1 thread. It uses only New and Answer, so the same file runs against another llama.cpp
// build of this package and benchstat gives the ratio (docs/runtimes.md "Build").
func BenchmarkAsk(b *testing.B) {
	q := archs[testmodel.ArchQwen25VL]
	frames := synthFrames(8, 224, 168)
	for _, c := range []struct {
		name  string
		input string
		n     int
	}{{"video-8", llm.InputVideo, 8}, {"images-8", llm.InputImages, 8}, {"text", "", 0}} {
		b.Run("input="+c.name, func(b *testing.B) {
			rt, err := New(q.Model, q.Mmproj, Options{Threads: 1, Context: 4096, Input: c.input})
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			req := &llm.Request{Frames: frames[:c.n], Question: "Which?", Options: []string{"A. x", "B. y", "C. z", "D. w"}, MaxTokens: 8}
			if c.input == llm.InputVideo {
				req.Video = timing("uniform", c.n)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rt.Answer(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
