//go:build !asan

// (Not under -asan: this test links the engine — FFmpeg, OpenCV — which make's ASan run of this
// package does not build.)

package llamacpp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/rgb"
	"github.com/framesweep/framesweep/sampler"
)

// TestConsumesEngineFrames: the pixels this runtime hands llama.cpp for a request are exactly the
// engine's frames tensor, whose sha256 a sweep records as input_sha256. tokenizeFrame passes each
// frame's packed RGB rows (Image.Packed) to mtmd_bitmap_init, frame by frame in request order; those
// bytes, for the engine's frames of a real video, hash to the object's DataSHA256. And the answer is
// a function of those bytes alone: frames rebuilt from the hashed bytes get the identical answer.
func TestConsumesEngineFrames(t *testing.T) {
	ctx := context.Background()
	v, src, err := pipeline.OpenVideo(ctx, pipeline.VideoRef{Path: filepath.Join("..", "..", "testdata", "videos", "nasa_13013.mp4")}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cfg, err := grid.One("uniform", sampler.Request{Frames: 4}, "56x42", "")
	if err != nil {
		t.Fatal(err)
	}
	jobs, fails, err := pipeline.PlanJobs(v, []grid.Config{cfg}, pipeline.Options{})
	if err != nil || len(fails) > 0 {
		t.Fatal(err, fails)
	}
	var obj *pipeline.Object
	if _, jerrs, err := pipeline.Run(ctx, v, src, jobs, &pipeline.MemorySink{Done: func(o *pipeline.Object) error { obj = o; return nil }}); err != nil || len(jerrs) > 0 {
		t.Fatal(err, jerrs)
	}
	in, err := obj.Input() // what the sweep hands a runtime: the object's frames
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	var consumed []byte
	for _, f := range in.Frames {
		consumed = append(consumed, f.Packed()...) // the bytes tokenizeFrame gives mtmd_bitmap_init
	}
	h.Write(consumed)
	if got := hex.EncodeToString(h.Sum(nil)); got != obj.DataSHA256 {
		t.Fatalf("the runtime consumes %d bytes hashing to %s; the engine's tensor (input_sha256) is %s", len(consumed), got, obj.DataSHA256)
	}
	rt := open(t, "llamacpp:model="+tiny.Model+",mmproj="+tiny.Mmproj+",threads=1,ctx=2048")
	req := llm.Request{Frames: in.Frames, Question: "What is in the video?", Options: []string{"A. a rocket", "B. a cat"}}
	resp, err := rt.Answer(ctx, &req)
	if err != nil {
		t.Fatal(err)
	}
	checkProbs(t, resp, "A", "B")
	rebuilt := make([]*rgb.Image, len(in.Frames))
	per := 3 * 56 * 42
	for i := range rebuilt {
		rebuilt[i] = &rgb.Image{W: 56, H: 42, Stride: 3 * 56, Pix: append([]byte(nil), consumed[i*per:(i+1)*per]...)}
	}
	req.Frames = rebuilt
	again, err := rt.Answer(ctx, &req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Text != resp.Text || again.Probs["A"] != resp.Probs["A"] || again.PromptTokens != resp.PromptTokens {
		t.Errorf("frames rebuilt from the hashed bytes answer %q %v, the engine's %q %v", again.Text, again.Probs, resp.Text, resp.Probs)
	}
}
