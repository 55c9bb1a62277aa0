// Package cascade is the confidence cascade of METRICS.md: ask an item at the smallest budget and
// escalate while the model's confidence is below τ. Offline, Run sweeps every τ over the records of
// a budget chain (an audit/dataset table), keeps the cheapest τ that reaches the reference budget's
// accuracy, and cross-fits it over seeded folds (Offline: the same from records, `framesweep
// cascade`). Online, SummarizeOnline summarises a run that `framesweep sweep --cascade` escalated item
// by item, Stops replays the offline rule on a full sweep, CompareOnline holds the two side by side,
// and ChooseThreshold picks an online run's τ from an earlier full sweep.
//
// It sits above audit/dataset and below package audit, whose Result carries its Result and Online.
package cascade
