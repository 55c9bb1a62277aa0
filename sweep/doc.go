// Package sweep is framesweep's main job: every item of an items file under every configuration of a
// grid, through one model runtime, recorded as canonical audit records, crash-safe and resumable.
//
//	ITEMS.jsonl ─► items grouped by video (content digest; --shard keeps this machine's videos)
//	GRID.yaml   ─► configs; text-only ones need no frames
//	per video:  pipeline.Plan + one pipeline.Run pass over the union of every pending config's frames
//	            into a content-addressed store (--cache, or the run's own scratch store), so a sweep
//	            after extract decodes nothing; each config's input is loaded as soon as it is written
//	            and fed to the runtime for every item on that video
//	RUN/records.jsonl  one record per (item, config): the answer, or status "error" with the reason
//	RUN/run.json       what the run is (grid, items, runtime, libraries, command) and when it ran
//
// Records are appended one line per write and fsynced in small batches; on --resume a torn last line
// is cut, every recorded pair is skipped, and a RUN of another grid, items file or runtime is refused.
// SIGINT/SIGTERM stop new work, let the answers in flight finish and leave a resumable RUN.
//
// RUN may be a blob URL (s3://, gs://, azblob://): the records are then immutable chunk objects
// (store.go), and every reader of a RUN (OpenRun) reads records.jsonl and the chunks alike. Merge joins
// the RUNs of a sweep's shards into one (merge.go; docs/scale-out.md).
package sweep
