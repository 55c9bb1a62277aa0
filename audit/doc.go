// Package audit computes the item-level scaling audit of METRICS.md from canonical records: paired
// trajectories, the core multiple-choice metrics and per-pair flows (rescued, harmed, churn, exact McNemar
// p), seeded bootstrap intervals, the rerun noise floor, open-ended Token-F1 metrics, the
// interventions (sampling recovery, iso-compute groups, raw vs cached flips, letter prior), protocol
// agreement, and several models side by side on their matched grid.
//
// It reads the records (record.Read, runs.ReadAll) as the item × config table of audit/dataset, and
// the confidence cascade of its Result is audit/cascade's. Analyze turns records into a Result whose
// JSON encoding is the output of `framesweep audit --json`; audit/report renders the same Result as
// HTML, Markdown and the text summary. The files go by subject: analyze.go (options, Result,
// Analyze), metrics.go (the paired multiple-choice metrics), patterns.go (the trajectory table they
// count), bootstrap.go, and one file per further analysis.
//
// It is pure Go and builds with CGO_ENABLED=0, so analysis runs anywhere. Randomness (bootstrap
// resamples, cascade folds) comes from SplitMix64 (internal/splitmix), never math/rand, so the numbers
// are the same on every Go version and can be reproduced by another implementation.
package audit
