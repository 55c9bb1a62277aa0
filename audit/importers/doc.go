// Package importers turns the per-item logs of other evaluation harnesses into canonical audit records:
// lmms-eval (all three log generations: legacy <task>.json with "logs", nested samples_*.jsonl, and the
// flattened v0.7 form) and VLMEvalKit prediction files (xlsx, tsv, json). Correctness comes from the task's
// own per-item payload where it has one; VLMEvalKit's `candidates` column, a Python list literal, is parsed
// as data by ParsePyList and never evaluated. Every error names the file (and line or row).
package importers
