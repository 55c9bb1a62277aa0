// Package llamacpp is the in-process llama.cpp backend of llm: a GGUF text model and its vision projector
// (mmproj) loaded through the `llama` package of github.com/ollama/ollama v0.17.4 (vendored llama.cpp
// ec98e2002 + mtmd), greedy decoding, and a confidence from the logits of the option-letter tokens at the
// first answer position.
//
// Spec: llamacpp:model=PATH[,mmproj=PATH,threads=N,ctx=N,chat=gguf|chatml|plain,image_min_tokens=N,
// image_max_tokens=N]
//
// Model files are checked in Go (GGUF magic, header, tensor extents, architecture; for projectors the
// keys, tensors and shapes the projector type's clip graph needs) before llama.cpp sees them, because
// llama.cpp aborts the process on some malformed files. Projector types are mlp (LLaVA), qwen2vl_merger,
// qwen2.5vl_merger, qwen3vl_merger and internvl; any other is refused at load with its name.
//
// Frames go to mtmd as raw RGB bitmaps (mtmd_bitmap_init), one image per frame, so C never decodes
// image bytes; a frame that fails validation never reaches C. Each frame is evaluated by mtmd's helper
// (mtmd_helper_eval_chunks), which lays its embeddings out at M-RoPE positions for the Qwen2-VL family
// and at 1-D positions otherwise; text around the frames goes through our own batch. The projector
// runs with the spec's thread count (the ollama wrapper would fix it at 4, which on a 2-core machine
// makes the image encoder ~1000x slower), through our own small cgo shim.
//
// Turns are formatted with the GGUF's own chat template (llama.cpp's built-in formatter, which knows a
// fixed list of template families) when the file has one, else as chatml; chat=chatml|plain override.
//
// Every C handle (model, context, mtmd context, batch, and each request's tokenized frames) has one
// owner whose free/Close is idempotent; LiveHandles counts the handles alive so tests can assert it
// returns to zero.
package llamacpp
