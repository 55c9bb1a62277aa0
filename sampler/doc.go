// Package sampler turns a frame budget into frame indices, exactly as the Video LLM stacks do it.
//
// Indices are 0-based positions in presentation order of the decoded frames of the primary video
// stream (DESIGN.md "Frame semantics"). A Sampler is either a generic policy (uniform in each
// upstream convention, seeded random, dense-start, fps-based, nested) or a named preset that
// reproduces one framework index for index (qwen2.5-vl, qwen3-vl, internvl3, llava-onevision,
// llava-video, lmms-eval, vlmevalkit, videomme). The formulas and their float behaviour are
// specified in SAMPLING.md; each preset's doc comment names the upstream file it follows.
//
// A Grid (YAML) expands frame budgets × samplers × seeds × resolutions × pipelines into Configs
// with stable ids; Config.Plan gives each config's indices for a Video, Union the frames that a
// single decode pass must produce, and DecodePlanFor how many seeks that pass needs.
//
// The package is pure Go and builds with CGO_ENABLED=0: analysis and planning work anywhere.
package sampler
