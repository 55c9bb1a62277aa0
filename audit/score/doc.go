// Package score holds the verdict rules a record's correct, score and confidence come from: the
// letter match of a multiple-choice answer, METRICS.md's Token-F1 of an open-ended one, and the
// confidence of a runtime's option probabilities. It belongs to the audit (the rules are the audit's
// definitions) but is a leaf package of pure functions, so the producer of records (the sweep) scores
// with the very rules the audit and its importers use, without importing the analysis.
package score
