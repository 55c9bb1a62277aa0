// Package score holds the verdict rules a record's correct, score and confidence come from: the
// letter match of a multiple-choice answer, METRICS.md's Token-F1 of an open-ended one, and the
// confidence of a runtime's option probabilities. The rules are the audit's definitions, but the
// package sits at the record's floor, a leaf of pure functions: the producer of records (the sweep),
// the importers (ingest) and the audit all score with it, and the producer imports no analysis.
package score
