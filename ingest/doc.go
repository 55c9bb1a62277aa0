// Package ingest turns the per-item logs of other evaluation harnesses, and a study's own per-item
// tables, into canonical records (record.Record) for the audit: lmms-eval (all three log generations:
// legacy <task>.json with "logs", nested samples_*.jsonl, and the flattened v0.7 form), VLMEvalKit
// prediction files (xlsx, tsv, json) and long or wide tables (csv, tsv, xlsx, parquet). It stands
// beside items (a benchmark release → items) at the record's floor: it produces records and imports
// no analysis. Correctness comes from the task's own per-item payload where it has one; VLMEvalKit's
// `candidates` column, a Python list literal, is parsed as data by pyval.ParseList and never
// evaluated. Every error names the file (and line or row).
package ingest
