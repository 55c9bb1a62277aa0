// Package grid is the experiment language: a YAML grid file (strictly decoded: unknown keys,
// non-integers in integer fields and a second document are errors naming the line) expands frame
// budgets × samplers × seeds × resolutions × pipelines — or a harness loader's budgets × resolutions —
// into Configs with stable ids. A matched grid's `model:` section sets a context ceiling: each config's
// visual tokens (tokens per frame or per resolution, or the resolution's geometry applied to the
// source size), whether it fits, and iso-compute groups. One and OneLoader name a single config the
// way a grid would (ask, serve). docs/sampler.md describes every field.
//
// A Config samples a video through package sampler (policies and presets); a loader config's frames
// are its reader's, planned by the engine (package pipeline). The package is pure Go and builds with
// CGO_ENABLED=0.
package grid
