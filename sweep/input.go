package sweep

import (
	"context"
	"fmt"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/rgb"
)

// Input is one config's model input as the sweep feeds it, built from a pipeline object (NewInput):
// the uint8 RGB frames (views of the object's tensor: the same bytes a store object holds, never
// re-read), or, for a tensor runtime (AdoptTensorInput built the object as it describes), the float
// tensor itself.
type Input struct {
	Job     *pipeline.Job
	Frames  []*rgb.Image // a runtime that takes frames: the images in tensor order
	Tensor  *llm.Tensor  // a tensor runtime (llm.TensorInput)
	SHA256  string       // sha256 of the frames tensor: the record's input_sha256
	Damaged []int        // frames the decoder concealed (fed under --on-damaged keep)
}

// NewInput is the model input of a built object: the one function the sweep's feeder and `framesweep
// ask` make their inputs with.
func NewInput(o *pipeline.Object) (*Input, error) {
	j := o.Result.Job
	in := &Input{Job: j, SHA256: o.DataSHA256, Damaged: o.Result.Damaged}
	if err := in.setData(j.Key, cache.Tensor{Name: "frames", DType: j.DType, Shape: j.Shape(), Data: o.Data}); err != nil {
		return nil, err
	}
	return in, nil
}

// setData makes t the input the runtime is fed: uint8 RGB images (views of t's data), or, for a float
// tensor (only a tensor runtime's options build one: AdoptTensorInput), the tensor itself.
func (in *Input) setData(key string, t cache.Tensor) error {
	switch t.DType {
	case cache.U8:
		f := &cache.File{Tensors: map[string]cache.Tensor{"frames": t}}
		frames, err := f.Images("frames")
		in.Frames = frames
		return err
	case cache.F32:
		data, err := pipeline.Float32s(t.Data)
		if err != nil {
			return fmt.Errorf("input %s: %w", key, err)
		}
		shape := make([]int64, len(t.Shape))
		for i, d := range t.Shape {
			shape[i] = int64(d)
		}
		in.Tensor = &llm.Tensor{Shape: shape, Data: data}
		return nil
	}
	return fmt.Errorf("input %s is %s: the runtimes take uint8 RGB frames or a float32 tensor", key, t.DType)
}

// Fill gives req the input: its frames, or its tensor, and when the frames were shown (v's plan
// timing, for the runtimes that feed frames as the model's video).
func (in *Input) Fill(req *llm.Request, v *pipeline.Video) {
	req.Frames = in.Frames
	if in.Tensor != nil {
		req.Tensors = []llm.Tensor{*in.Tensor}
	}
	req.Video, req.ImagesPerFrame = VideoTiming(v, in.Job, len(in.Frames)), in.Job.Images
}

// OneVideo is one video opened for a single question (`framesweep ask`): opened first, so that a bad
// video is reported before the model is loaded. Close releases it.
type OneVideo struct {
	v          pipeline.Video
	src        pipeline.Source
	o          pipeline.Options
	endWorkers func() // o's worker process (with o.Worker): the description and the builds in one
}

// OpenOne opens the video at path through the engine's source layer with o.
func OpenOne(ctx context.Context, path string, o pipeline.Options) (*OneVideo, error) {
	o, end := o.WithWorkerPool(1)
	v, src, err := pipeline.OpenVideo(ctx, pipeline.VideoRef{Path: path}, o)
	if err != nil {
		end()
		return nil, err
	}
	return &OneVideo{v: v, src: src, o: o, endWorkers: end}, nil
}

// Close releases the video; idempotent.
func (ov *OneVideo) Close() error {
	if ov == nil || ov.src == nil {
		return nil
	}
	err := ov.src.Close()
	ov.src = nil
	ov.endWorkers()
	return err
}

// OneInput is one config's input for one video as a sweep would feed it.
type OneInput struct {
	*Input
	Video *pipeline.Video
}

// Build builds config c's input for the video through the engine (one pass, in memory), exactly as a
// sweep of rt feeds it and extract stores it: a tensor runtime's input as it describes it
// (AdoptTensorInput: a config at another geometry, or another kernel, is an *OptionsError), else the
// uint8 frames.
func (ov *OneVideo) Build(ctx context.Context, rt llm.Runtime, engine string, c grid.Config) (*OneInput, error) {
	o, err := AdoptTensorInput(rt, engine, []grid.Config{c}, ov.o)
	if err != nil {
		return nil, err
	}
	jobs, fails, err := pipeline.PlanJobsContext(ctx, ov.v, []grid.Config{c}, o)
	if err != nil {
		return nil, err
	}
	if len(fails) > 0 {
		return nil, fails[0].Err
	}
	var obj *pipeline.Object
	_, jerrs, err := pipeline.Run(ctx, ov.v, ov.src, jobs, &pipeline.MemorySink{Done: func(ob *pipeline.Object) error { obj = ob; return nil }})
	if err != nil {
		return nil, err
	}
	if len(jerrs) > 0 {
		return nil, jerrs[0].Err
	}
	in, err := NewInput(obj)
	if err != nil {
		return nil, err
	}
	return &OneInput{Input: in, Video: &ov.v}, nil
}
