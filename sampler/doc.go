// Package sampler turns a frame budget into frame indices, exactly as the Video LLM stacks do it.
//
// Indices are 0-based positions in presentation order of the decoded frames of the primary video
// stream (DESIGN.md "Frame semantics"). A Sampler is either a generic policy (uniform in each
// upstream convention, seeded random, dense-start, fps-based, nested) or a named preset that
// reproduces one framework index for index (qwen2.5-vl, qwen3-vl, internvl3, llava-onevision,
// llava-video, lmms-eval, vlmevalkit, videomme). Sampler.Select gives a video's Selection: the
// indices and their timestamps. The formulas and their float behaviour are specified in
// SAMPLING.md; each preset's doc comment names the upstream file it follows.
//
// Union gives the frames a group of selections needs (what a single decode pass must produce). The
// experiment language that names samplers — grids, their configs and ids — is package grid's; what
// decoding a union costs is decode's (Video.ReadCost).
//
// The package is pure Go and builds with CGO_ENABLED=0: analysis and planning work anywhere.
package sampler
