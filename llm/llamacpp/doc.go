// Package llamacpp is the in-process llama.cpp backend of llm: a GGUF text model and its vision projector
// (mmproj) loaded through the `llama` package of github.com/ollama/ollama v0.17.4 (vendored llama.cpp
// ec98e2002 + mtmd), greedy decoding, and a confidence from the logits of the option-letter tokens at the
// first answer position.
//
// Spec: llamacpp:model=PATH[,mmproj=PATH,threads=N,ctx=N,chat=chatml|plain]
//
// Model files are checked in Go (GGUF magic, header, tensor extents, architecture) before llama.cpp sees
// them, because llama.cpp aborts the process on some malformed files. Frames go to mtmd as raw RGB
// bitmaps (mtmd_bitmap_init), so C never decodes image bytes; a frame that fails validation never
// reaches C. The projector runs with the spec's thread count (the ollama wrapper would fix it at 4,
// which on a 2-core machine makes the image encoder ~1000x slower), through our own small cgo shim.
//
// Every C handle (model, context, mtmd context, batches) has one owner, Runtime, whose Close is
// idempotent; LiveHandles counts the handles alive so tests can assert it returns to zero.
package llamacpp
