// Package geom decides what size a Video LLM sees each frame at: the geometry policies of the reference
// preprocessing stacks (qwen-vl-utils smart_resize and its per-frame cap, the HF Qwen3-VL T×H×W variant,
// InternVL dynamic_preprocess tiles including lmms-eval's CPython set-order variant, LLaVA SigLIP 384 and
// CLIP 336 shortest-edge + centre crop), plain policies (fixed W×H, shortest edge, max pixels, native),
// and an iso-compute allocation solver.
//
// It only computes sizes and rectangles; the pixels are produced by the kernels in resize/ and native/.
// It is pure Go (builds with CGO_ENABLED=0) so the sampler and the planner can import it anywhere.
//
// Every formula is a port of the upstream Python (SAMPLING.md §1–5 names the file for each); where Python
// mixes ints and floats or rounds half to even, the Go code does the same operations in the same order in
// float64, which gives identical results for the magnitudes involved (all integers are far below 2^53).
// A Geometry is obtained from a spec string with Parse (the grid-file syntax, see docs/geometry.md) or
// from a sampler preset name with ForPreset, and is asked for a Layout per (source size, frame count).
package geom
