package worker

// ops are the production ops.
var ops = map[string]opFunc{}
