package llamacpp

import (
	"context"
	"fmt"
	"testing"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/testmodel"
)

// TestVisualTokensEveryFamily: in process, the family's arithmetic (llm.Vision.Count with the
// projector's own settings) and the embeddings mtmd built agree exactly, for every family's tiny
// model, as images and as the family's video, at frame counts with and without a partner for the last
// frame of a Qwen pair, at sizes that mtmd keeps, rounds (70 = 2.5 × 28, 80 = 2.5 × 32: half away from zero, not to
// even), upscales to its minimum and downscales to its maximum (image_max_tokens=16), and that the
// InternVL projector tiles (161×121 as images: llava-uhd slices and an overview).
func TestVisualTokensEveryFamily(t *testing.T) {
	sizes := [][2]int{{56, 42}, {70, 112}, {80, 128}, {112, 84}, {161, 121}, {30, 200}}
	for _, a := range testmodel.Archs {
		p := archs[a]
		inputs := []string{llm.InputImages}
		if a != testmodel.ArchLlama {
			inputs = append(inputs, llm.InputVideo)
		}
		caps := []int{0}
		if a == testmodel.ArchQwen25VL || a == testmodel.ArchQwen3VL {
			caps = append(caps, 16)
		}
		for _, in := range inputs {
			for _, maxTok := range caps {
				rt, err := New(p.Model, p.Mmproj, Options{Threads: 1, Context: 8192, Input: in, ImageMaxTokens: maxTok})
				if err != nil {
					t.Fatal(err)
				}
				for _, wh := range sizes {
					for _, n := range []int{1, 3, 4} {
						name := fmt.Sprintf("%s/%s/max%d/%dx%d/%d", a, in, maxTok, wh[0], wh[1], n)
						req := &llm.Request{Frames: synthFrames(n, wh[0], wh[1]), Video: timing("uniform", max(n, 2)), Question: "q",
							Options: []string{"A. x", "B. y"}, MaxTokens: 1}
						if n == 1 {
							req.Video = &llm.VideoTiming{TimestampsS: []float64{0.5}, SampleFPS: 2}
						} else {
							req.Video.TimestampsS, req.Video.Indices = req.Video.TimestampsS[:n], req.Video.Indices[:n]
						}
						resp, err := rt.Answer(context.Background(), req)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						c := resp.VisualCheck
						if c == nil || c.Expected == nil || c.Seen == nil || c.How != llm.HowRuntime || c.Why != "" {
							t.Fatalf("%s: check %+v", name, c)
						}
						if *c.Seen != resp.VisualTokens || *c.Expected != *c.Seen || resp.VisualTokens == 0 {
							t.Errorf("%s (%s): expected %d, mtmd built %d (response %d)", name, resp.InputForm, *c.Expected, *c.Seen, resp.VisualTokens)
						}
						if c.Family != projectorFamilies[rt.proj] {
							t.Errorf("%s: family %q", name, c.Family)
						}
					}
				}
				rt.Close()
			}
		}
	}
	// Text alone has no check.
	rt := open(t, "llamacpp:model="+archs[testmodel.ArchQwen25VL].Model+",mmproj="+archs[testmodel.ArchQwen25VL].Mmproj+",threads=1")
	resp, err := rt.Answer(context.Background(), &llm.Request{Question: "q", Options: []string{"A. x", "B. y"}, MaxTokens: 1})
	if err != nil || resp.VisualCheck != nil {
		t.Errorf("text-only: %+v, %v", resp.VisualCheck, err)
	}
}
