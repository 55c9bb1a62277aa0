package pipeline_test

import (
	"context"
	"fmt"
	"os"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/pipeline"
)

// Plan a two-config grid for a testdata video, decode it once into a store, and read one object back
// into the frames a model would see.
func Example() {
	ctx := context.Background()
	grid, err := grid.Parse([]byte("frames: [4, 8]\npolicies: [uniform]\nresolutions: [\"64x48\"]\n"))
	if err != nil {
		panic(err)
	}
	v, src, err := pipeline.OpenVideo(ctx, pipeline.VideoRef{Path: "../testdata/videos/nasa_13013.mp4"}, pipeline.Options{})
	if err != nil {
		panic(err)
	}
	defer src.Close()
	jobs, failures, err := pipeline.PlanJobs(v, grid.Configs, pipeline.Options{})
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "pipeline-example")
	defer os.RemoveAll(dir)
	store, err := cache.Open(ctx, dir)
	if err != nil {
		panic(err)
	}
	defer store.Close()

	st, jobErrs, err := pipeline.Run(ctx, v, src, jobs, &pipeline.StoreSink{Ctx: ctx, Store: store})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(jobs), "jobs,", len(failures), "failures,", len(jobErrs), "job errors")
	fmt.Println("frames requested", st.Requested, "union", st.Union, "decoded", st.Decoded)

	in, _, err := pipeline.LoadInput(ctx, store, jobs[1].Key)
	if err != nil {
		panic(err)
	}
	fmt.Println(in.Config, in.Indices, in.Tensor.Shape, len(in.Frames), in.Frames[0].W, in.Frames[0].H)
	fmt.Println("stream", in.Meta["stream_index"], "of", v.Info.VideoStreams, "frames", v.Info.Frames)
	// Output:
	// 2 jobs, 0 failures, 0 job errors
	// frames requested 12 union 10 decoded 10
	// f8-uniform-64x48-raw [0 56 111 167 222 278 333 389] [8 48 64 3] 8 64 48
	// stream 3 of [0 3] frames 390
}
