// Package record is the schema of framesweep's records and their JSON Lines form: one model answer for
// one item under one configuration (METRICS.md "Records"). It is the layer every producer and consumer
// of records shares, and it is pure Go (builds with CGO_ENABLED=0):
//
//	producers                 record (this package)              consumers
//	sweep (a model's answers) ─► Record: the canonical fields    ◄─ audit (metrics, cascade, report)
//	ingest (harness logs and     the audit reads                   runs (a RUN's store, merge)
//	tables)                      Provenance: what the sweep
//	                             adds about input and answer
//	                             Full = Record + Provenance: one
//	                             line of a sweep's records.jsonl
//
// One schema, two views: a sweep writes Full (flattened: provenance keys beside the canonical ones);
// the audit decodes the same line into Record, skipping the provenance, so an audit of a million
// records holds only what it analyses. Read/ReadFile/ReadPaths parse and validate record files (file
// and line in every error), Write writes the canonical form.
//
// Errors are *Error (file, line, operation) wrapping one of the sentinels (ErrSyntax, ErrInvalid, …).
package record
