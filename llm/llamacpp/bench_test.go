package llamacpp

import (
	"context"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/testmodel"
	"github.com/framesweep/framesweep/rgb"
)

// BenchmarkAsk times one in-process answer of the tiny Qwen2.5-VL model (load excluded): 8 frames of
// 224×168 as its video (4 temporal pairs) and as 8 images, 2 frames of 112², the demo sweep's sizes in
// turn (the image size changes on every call), and the question alone; 8 generated tokens, greedy,
// 1 thread. text-long is the sweep's shape (a long question, 32 tokens); llava-images-mixed is the
// demo sweep's own model. It uses only New and Answer, so the same file runs against another llama.cpp
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
	long := ask("", nil)
	long.Question, long.MaxTokens = strings.Repeat("Which one of these is it? ", 20), 32
	for _, c := range []struct {
		name, input string
		reqs        []*llm.Request // asked in turn: "mixed" changes the image size on every call, as a sweep does
		arch        testmodel.Arch // "": Qwen2.5-VL
	}{
		{"video-8", llm.InputVideo, []*llm.Request{ask(llm.InputVideo, frames)}, ""},
		{"images-8", llm.InputImages, []*llm.Request{ask(llm.InputImages, frames)}, ""},
		{"video-2-112", llm.InputVideo, []*llm.Request{ask(llm.InputVideo, small)}, ""},
		{"video-mixed", llm.InputVideo, []*llm.Request{ask(llm.InputVideo, small), ask(llm.InputVideo, tiny)}, ""},
		{"images-mixed", llm.InputImages, []*llm.Request{ask(llm.InputImages, small), ask(llm.InputImages, tiny)}, ""},
		{"text", "", []*llm.Request{ask("", nil)}, ""},
		// The sweep's shape: a question of about 180 tokens and 32 generated tokens, the text model's
		// per-token cost rather than the encoder's.
		{"text-long", "", []*llm.Request{long}, ""},
		// The demo sweep's own model: testmodel's default llama text + LLaVA "mlp" projector.
		{"llava-images-mixed", llm.InputImages, []*llm.Request{ask(llm.InputImages, small), ask(llm.InputImages, tiny)}, testmodel.ArchLlama},
	} {
		b.Run("input="+c.name, func(b *testing.B) {
			m := q
			if c.arch != "" {
				m = archs[c.arch]
			}
			rt, err := New(m.Model, m.Mmproj, Options{Threads: 1, Context: 4096, Input: c.input})
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
