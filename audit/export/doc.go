// Package export writes the release a study publishes from an audit (`framesweep audit … --export
// DIR`): every answer as one row per item × config × model with its provenance, every item's
// trajectory and tags as the audit counts them, the audit itself, and a datasheet of the columns
// (docs/audit.md "The artifact"). Rows are JSON Lines, readable with nothing but a JSON parser, and
// Parquet beside them (github.com/parquet-go/parquet-go; a build with -tags noparquet writes JSON
// Lines only and says so in the manifest and the datasheet).
//
// The export's records.jsonl is canonical records (record.Full): `framesweep audit DIR` of an export
// reads it and, with the options the manifest (export.json) records, gives the same audit.
package export
