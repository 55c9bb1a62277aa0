// Package extract is the engine's application over many videos: `framesweep extract` builds every
// (video, config, pipeline) object of a grid into a content-addressed cache, decoding each video once,
// several videos at a time, with a manifest line per outcome and a closing Summary. A video or pair
// that fails is reported and the others go on; only the store itself stops a run.
//
// It sits on the producer floor, above the engine (pipeline), which it calls for everything it
// decodes and plans (pipeline.OpenVideo, PlanJobsContext, Run): extract owns the jobs over many
// videos, the shard assignment, the workers and the summary, never a frame.
package extract
