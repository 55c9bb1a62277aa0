// Package pipeline is framesweep's decode-once engine: it turns one video and a grid into the exact
// inputs a model sees, for every configuration, from a single forward decoding pass.
//
//	video ──► Plan: one Job per (config, pipeline) with its frame indices, geometry, tensor shape
//	          and content key; a config that cannot be planned for this video is a Failure
//	      ──► Run: ONE decoding pass over the union of every job's frames; each decoded frame is
//	          converted once, JPEG-round-tripped once (cached pipeline), resized once per distinct
//	          size (resize.FanOut), cut to each job's layout (crop, tiles + thumbnail), converted to
//	          the job's dtype, and handed to the job's JobWriter in plan order
//	      ──► Sink: StoreSink streams each job's tensor into a spool and publishes the object when its
//	          last frame arrives (cache.Store.PutSpooled); MemorySink keeps it (model feeders, HTTP)
//
// Memory holds the frames in flight, never a whole configuration's tensor (except in a MemorySink,
// which the caller sizes). The stored-object format (a safetensors file: frames, indices and the
// provenance in its metadata) is written by ObjectHeader + the streamed data + IndicesData, and read
// back by ReadInput into exactly the frames the model would see.
//
// Extract runs all of it over many videos into a content-addressed cache with a manifest; it is what
// `framesweep extract` is, and the sweep runner and the HTTP server are other callers of Plan/Run.
package pipeline
