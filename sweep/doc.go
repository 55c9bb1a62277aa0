// Package sweep is framesweep's main job, the producer of records: every item of an items file under
// every configuration of a grid, through one model runtime, recorded as canonical records, crash-safe
// and resumable. It sits on the engine and on the record core:
//
//	items.File  ─► groups: items by video; each video hashed once (the shard key, video_sha256, and the
//	               digest handed to pipeline.OpenVideo, which then hashes nothing)
//	per video (video.go, one driver for a fixed grid and an online cascade):
//	    rounds: a fixed grid is one round (every config with pairs left); a cascade one per budget,
//	            asking the items still unsure
//	    inputs: from the --cache when it holds them, else one pipeline.Run pass over the frames no
//	            earlier round decoded (framecache.go), each input fed to the runtime from the pass's
//	            memory as soon as it is built, and tee'd into the --cache (feed.go)
//	    answers: Concurrency at a time; verdicts by record/score (ask.go)
//	runs.Writer ─► RUN/run.json, RUN/records.jsonl (or chunk objects): one record.Full per pair
//
// Records are appended one line per write and fsynced in small batches; on --resume a torn last line
// is cut, every recorded pair is skipped, and a RUN of another grid, items file or runtime is refused
// (package runs). SIGINT/SIGTERM stop new work, let the answers in flight finish and leave a resumable
// RUN. The sweep imports no analysis: the audit reads what it writes through package record.
//
// Files: options.go (Options and their checks), run.go (Run: the session from the RUN's lock to its
// summary), session.go, groups.go (grouping and sharding), video.go (the per-video driver),
// framecache.go, feed.go (the feeder and the sink that tees), ask.go (requests, verdicts, record
// construction), cascade.go (the online cascade's ladder), info.go (what run.json says), progress.go.
package sweep
