// Package pipeline is framesweep's decode-once engine: it turns one video and a grid into the exact
// inputs a model sees, for every configuration, from a single forward decoding pass.
//
//	ref ──► source layer: OpenVideo (hashes the file unless the VideoRef carries its digest) or
//	        OpenSource (no digest: probe, plan, frames, the benchmarks) open the video in process or
//	        in supervised workers, through openDecoder alone; no other package calls decode.Open
//	    ──► PlanJobs: one Job per (config, pipeline) with its frame indices, geometry, tensor shape
//	        and content key; a config that cannot be planned for this video is a Failure
//	        (PlanFrames: a job of exact frames, without a sampler or a key)
//	    ──► Run: ONE decoding pass over the union of every job's frames; each decoded frame is
//	        converted once, JPEG-round-tripped once (cached pipeline), resized once per distinct
//	        size (resize.FanOut), cut to each job's layout (crop, tiles + thumbnail, padding),
//	        converted to the job's dtype, normalisation and tensor layout, and handed to the job's
//	        JobWriter in plan order (ImagesTensor runs the same per-frame path on in-memory images)
//	    ──► Sink: StoreSink streams each job's tensor into a spool and publishes the object when its
//	        last frame arrives (cache.Store.PutSpooled); MemorySink keeps it (model feeders, HTTP)
//
// Harness loaders (loaders.go, docs/loaders.md): RunLoader opens a video through the source layer
// the way a harness's reader does (load.DecodeOptions; openLocal: an in-process LocalSource) and runs
// the reader on it (load.Run); a config with a loader is planned by a plan-only run of it and built in
// Run by another, its frames then taking the same per-frame path. OpenLocal gives such a source to any
// caller (plan: the union's ReadCost, decode's own schedule of that Read).
//
// Callers: package extract (extract.Run), the sweep, serve, ask, frames, probe, plan and the benchmarks; each
// reaches the decoder only through the source layer (TestOneSourceLayer).
//
// Memory holds the frames in flight, never a whole configuration's tensor (except in a MemorySink,
// which the caller sizes). The stored-object format (a safetensors file: frames, indices and the
// provenance in its metadata) is written by ObjectHeader + the streamed data + IndicesData, and read
// back by ReadInput into exactly the frames the model would see. docs/pipeline.md has the details.
package pipeline
