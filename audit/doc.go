// Package audit computes the item-level scaling audit of METRICS.md from canonical records: paired
// trajectories, the core multiple-choice metrics and per-pair flows (rescued, harmed, churn, exact McNemar
// p), seeded bootstrap intervals, the rerun noise floor, open-ended Token-F1 metrics, the confidence
// cascade, and the interventions (sampling recovery, iso-compute groups, raw vs cached flips, letter prior).
//
// It is pure Go and builds with CGO_ENABLED=0, so analysis runs anywhere. Records are read and written as
// canonical JSON Lines (ReadRecords, WriteRecords); Analyze turns them into a Result whose JSON encoding is
// the output of `framesweep audit --json`; audit/report renders the same Result as HTML and Markdown.
//
// Randomness (bootstrap resamples, cascade folds) comes from SplitMix64 (internal/splitmix), never math/rand, so the
// numbers are the same on every Go version and can be reproduced by another implementation.
package audit
