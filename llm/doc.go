// Package llm is the model-runtime layer of framesweep: the small Runtime interface every backend
// implements, runtime specs ("engine:key=value,…") opened through an explicit Registry value, the
// benchmarks' prompt templates (Video-MME, MLVU, a generic one) and their official answer extraction,
// and the conversion of letter logits/logprobs into per-option probabilities.
//
// The package is pure Go. Backends live in subpackages (llm/llamacpp, llm/onnx, llm/openai) and are
// wired by the caller: llm.Registry{"openai": openai.Open, …}.Open(spec).
package llm
