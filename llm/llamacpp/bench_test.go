package llamacpp

import (
	"context"
	"testing"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/testmodel"
	"github.com/framesweep/framesweep/rgb"
)

// BenchmarkAsk times one in-process answer of the tiny Qwen2.5-VL model (load excluded): 8 frames of
// 224×168 as its video (4 temporal pairs) and as 8 images, 2 frames of 112², the demo sweep's sizes in
// turn (the image size changes on every call), and the question alone; 8 generated tokens, greedy,
// 1 thread. It uses only New and Answer, so the same file runs against another llama.cpp
// build of this package and benchstat gives the ratio (docs/runtimes.md "Build").
func BenchmarkAsk(b *testing.B) {
	q := archs[testmodel.ArchQwen25VL]
	frames := synthFrames(8, 224, 168)
	small := synthFrames(2, 112, 112) // the demo sweep's sizes: per-call overhead, not arithmetic
	tiny := synthFrames(3, 64, 48)
	ask := func(input string, f []*rgb.Image) *llm.Request {
		r := &llm.Request{Frames: f, Question: "Which?", Options: []string{"A. x", "B. y", "C. z", "D. w"}, MaxTokens: 8}
		if input == llm.InputVideo {
			r.Video = timing("uniform", len(f))
		}
		return r
	}
	for _, c := range []struct {
		name, input string
		reqs        []*llm.Request // asked in turn: "mixed" changes the image size on every call, as a sweep does
	}{
		{"video-8", llm.InputVideo, []*llm.Request{ask(llm.InputVideo, frames)}},
		{"images-8", llm.InputImages, []*llm.Request{ask(llm.InputImages, frames)}},
		{"video-2-112", llm.InputVideo, []*llm.Request{ask(llm.InputVideo, small)}},
		{"video-mixed", llm.InputVideo, []*llm.Request{ask(llm.InputVideo, small), ask(llm.InputVideo, tiny)}},
		{"images-mixed", llm.InputImages, []*llm.Request{ask(llm.InputImages, small), ask(llm.InputImages, tiny)}},
		{"text", "", []*llm.Request{ask("", nil)}},
	} {
		b.Run("input="+c.name, func(b *testing.B) {
			rt, err := New(q.Model, q.Mmproj, Options{Threads: 1, Context: 4096, Input: c.input})
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := rt.Answer(context.Background(), c.reqs[i%len(c.reqs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
