// Package llamacpp is the in-process llama.cpp backend of llm: a GGUF text model and its vision projector
// (mmproj) loaded through the llama.cpp C API of upstream's prebuilt libraries (release v0.4.0 as npm
// @node-llama-cpp/linux-x64 ships them: libllama, libggml, libggml-base and one CPU backend per CPU
// level, the best loaded at run time; llama.cpp's CUDA backend on request), mtmd compiled from the same
// release's source by internal/mtmd, greedy decoding, and a confidence from the logits of the
// option-letter tokens at the first answer position.
//
// Spec: llamacpp:model=PATH[,mmproj=PATH,threads=N,ctx=N,chat=gguf|chatml|plain,image_min_tokens=N,
// image_max_tokens=N,input=images|video,tokens_per_second=N,system=auto|none,
// device=cpu|cudaN,gpu_layers=N]
//
// device=cudaN runs the model and the projector on that CUDA device (gpu_layers= of the text model's
// layers, all by default); `scripts/deps.sh cuda` installs a CUDA 13 and a CUDA 12 build of the CUDA
// backend, and the one whose runtime this host resolves is loaded (ResolveCUDA: LD_LIBRARY_PATH, the
// system, EnvCUDAPython's NVIDIA wheels; cuda.go). A GPU that cannot be had is an error naming what is
// missing (ErrNoGPU), never a fall-back to the CPU. Describe names the release and the devices actually
// loaded (the CPU backend's variant, the GPU and its CUDA build), and the sweep records it as
// runtime_backend.
//
// Libraries come from the install: the run path is $ORIGIN-relative only, and every CPU backend beside
// libllama is checked before dlopen (ELF extents, exports, the release's SHA256SUMS when installed); a
// damaged one is skipped and named (Skipped), never mapped (libcheck.go).
//
// Model files are checked in Go (GGUF magic, header, tensor extents, architecture; for text models the
// hyperparameters llama.cpp asserts on and, for llama/qwen2/qwen2vl/qwen3vl, what their graphs assert
// and every tensor's shape; for projectors the keys, tensors and shapes the projector type's clip graph
// needs) before llama.cpp sees them, because llama.cpp aborts the process on some malformed files. The
// first load of a pair then runs in a child process (probe.go): an abort there is an error naming the
// file, not the end of this process. Projector types are mlp (LLaVA), qwen2vl_merger,
// qwen2.5vl_merger, qwen3vl_merger and internvl; any other is refused at load with its name.
//
// Frames go to mtmd as raw RGB bitmaps (mtmd_bitmap_init), so C never decodes image bytes; a frame that
// fails validation never reaches C. The prompt is laid out in Go as pieces — text tokens, an image chunk
// of a frame or of a temporal pair of frames — each decoded with positions computed here: 1-D for text and for 1-D
// projectors, (t, h, w) M-RoPE positions for the Qwen2-VL family, where the next text starts one past
// the largest component (as transformers' get_rope_index continues after a vision block).
//
// input=images: each frame is one image (the family's markers around it). input=video: the frames as the
// family's video processor reads them — Qwen2-VL, Qwen2.5-VL, Qwen3-VL: temporal pairs through the two
// Conv3d patch kernels (upstream mtmd's temporal merge of two mergeable bitmaps; an odd count repeats
// the last frame), with framesweep's own layout where upstream's differs: one <|vision_start|>…<|vision_end|> block
// whose pairs take temporal positions by index (Qwen2-VL) or by absolute time, ⌊g × 2/fps ×
// tokens_per_second⌋ (Qwen2.5-VL), or each pair in its own block after its time as text, "<1.3
// seconds>" (Qwen3-VL); InternVL: "Frame{i}: " before each frame, one tile per frame (resized to the
// tile with Pillow's bicubic, as InternVL's load_video does; upstream mtmd tiles an image of any other
// size, which is what input=images gives: up to 12 tiles and a thumbnail) or, for tiled frames
// (llm.Request.ImagesPerFrame), all its tiles in one <img> block. Unset, the mode is
// video when the request carries its frames' timing (llm.Request.Video) and the family has a video path,
// images otherwise. LLaVA (mlp) projectors have no video path and refuse input=video by name.
// llm.Response reports the mode, the visual tokens and, per frame or pair, its tokens and positions.
//
// Turns are formatted with the GGUF's own chat template (llama.cpp's built-in formatter, which knows a
// fixed list of template families) when the file has one, else as chatml; chat=chatml|plain override.
// An InternVL prompt without a system turn gets the one InternVL's chat() sets (system=none: not).
//
// Every C handle (model, context, token batch, mtmd context, and each request's tokenized frames and
// frame pairs) has one owner whose free/Close is idempotent; LiveHandles counts the handles alive so
// tests can assert it returns to zero. Every C++ entry point (shim.cpp) catches exceptions.
package llamacpp
