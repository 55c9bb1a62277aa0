package openai

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/testsupport/ollamatest"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/internal/testsupport/testframes"
	"github.com/framesweep/framesweep/llm"
)

// TestRealServer answers a multiple-choice question about real video frames through a real
// OpenAI-compatible server (ollama built from the pinned module) serving the tiny test model.
func TestRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the ollama server")
	}
	video := testenv.SharedVideo(t, testframes.Video)
	fr, err := testframes.Extract(video, []int{0, 45, 90}, 64, 48)
	if err != nil {
		t.Fatal(err)
	}
	url := ollamatest.Start(t, ollamatest.Build(t))
	// No image_format: frames go as lossless PNG, the default.
	rt, err := llm.Registry{"openai": Open}.Open("openai:url=" + url + ",model=tiny,concurrency=2,timeout=60s")
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	req := &llm.Request{
		Frames:   fr,
		Question: "Which animal appears in the video?",
		Options:  []string{"A. a rabbit", "B. a bird", "C. a squirrel", "D. a fish"},
		Template: llm.TemplateVideoMME,
		Seed:     1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := rt.Answer(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("text %q choice %q probs %v tokens %d/%d latency %.2fs", resp.Text, resp.Choice, resp.Probs, resp.PromptTokens, resp.CompletionTokens, resp.LatencyS)
	if len(resp.Probs) != 4 {
		t.Fatalf("probs %v: want the 4 options", resp.Probs)
	}
	var sum float64
	for _, p := range resp.Probs {
		sum += p
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("probs sum to %v", sum)
	}
	if resp.Choice != llm.ExtractVideoMME(resp.Text) || resp.Template != llm.TemplateVideoMME {
		t.Errorf("choice %q for %q", resp.Choice, resp.Text)
	}
	if resp.PromptTokens < 3*4 {
		t.Errorf("prompt tokens %d: the images did not reach the model", resp.PromptTokens)
	}
	if resp.ImageFormat != "png" {
		t.Errorf("image_format %q, want png (the default)", resp.ImageFormat)
	}
	// Text-only requests are first-class, and greedy decoding is repeatable on the server too.
	txt, err := rt.Answer(ctx, &llm.Request{Question: req.Question, Options: req.Options, Template: llm.TemplateGeneric})
	if err != nil {
		t.Fatal(err)
	}
	again, err := rt.Answer(ctx, &llm.Request{Question: req.Question, Options: req.Options, Template: llm.TemplateGeneric})
	if err != nil {
		t.Fatal(err)
	}
	if txt.Text != again.Text {
		t.Errorf("temperature 0 not repeatable: %q vs %q", txt.Text, again.Text)
	}
	if txt.PromptTokens >= resp.PromptTokens {
		t.Errorf("text-only prompt %d tokens ≥ with frames %d", txt.PromptTokens, resp.PromptTokens)
	}
	// JPEG frames and the MLVU template (system turn + prefilled assistant turn) are accepted too.
	jp, err := llm.Registry{"openai": Open}.Open("openai:url=" + url + ",model=tiny,image_format=jpeg,quality=80")
	if err != nil {
		t.Fatal(err)
	}
	defer jp.Close()
	ml, err := jp.Answer(ctx, &llm.Request{Frames: fr, Question: req.Question, Options: req.Options, Template: llm.TemplateMLVU, MaxTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(ml.Probs) != 4 || ml.Template != llm.TemplateMLVU || ml.CompletionTokens > 4 || ml.ImageFormat != "jpeg:q=80" {
		t.Errorf("mlvu over jpeg: %+v", ml)
	}
}
