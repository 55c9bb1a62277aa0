// Package llamacpp is the in-process llama.cpp backend of llm: a GGUF text model and its vision projector
// (mmproj) loaded through the `llama` package of github.com/ollama/ollama v0.17.4 (vendored llama.cpp
// ec98e2002 + mtmd), greedy decoding, and a confidence from the logits of the option-letter tokens at the
// first answer position.
//
// Spec: llamacpp:model=PATH[,mmproj=PATH,threads=N,ctx=N,chat=chatml|plain]
//
// Model files are checked in Go (GGUF magic, header, tensor extents, architecture) before llama.cpp sees
// them, because llama.cpp aborts the process on some malformed files. Frames are encoded to PNG in Go and
// handed to mtmd; a frame that fails validation never reaches C.
//
// Every C handle (model, context, mtmd context, batches) has one owner, Runtime, whose Close is
// idempotent; LiveHandles counts the handles alive so tests can assert it returns to zero.
package llamacpp
