// Package dataset arranges canonical records as the table every analysis of the audit reads: items ×
// configs, each cell the primary run of that item under that config, the reruns beside it, and each
// config's metadata merged from its records' config_meta (a disagreement is an error naming both
// records) with its cost (METRICS.md "Cost"). It is the floor below the metrics (package audit) and the
// confidence cascade (audit/cascade), which both read a Dataset.
package dataset
