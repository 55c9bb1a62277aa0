// Package runs is a RUN: where a sweep's records live, local or on an object store, and everything
// that reads, writes or joins one. It is the record core's storage layer, pure Go (CGO_ENABLED=0),
// shared by the sweep (which writes a RUN), merge, and the audit (which reads one):
//
//	RUN/run.json            Info: what the sweep is (grid, items, runtime, inputs, shard) and its sessions
//	RUN/records.jsonl       local: one record.Full per line, append-only, fsynced in batches
//	RUN/records/S-N.L.H.jsonl object store (and RUNs copied from one): immutable chunks, each published
//	                        whole, its line count L and sha256 H in its name and in run.json (verify.go)
//	RUN/.lock | lock.json   one writer at a time: flock locally, a lease object on a bucket
//
// OpenWriter is a sweep session's hold on a RUN (lock, run.json, the records writer; a resume is
// checked against the RUN's Info and repairs a torn tail); Open reads a RUN; ReadAll reads the
// audit's inputs (record files, run directories and RUNs anywhere); Merge joins the RUNs of a sweep's
// shards into one. The schema of a record is package record's; this package never parses more of a
// line than the pair and status it must check, except to compare two records in a merge.
package runs
