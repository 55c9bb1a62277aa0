// Package openai is the llm backend for OpenAI-compatible chat servers (vLLM, SGLang, llama-server,
// ollama): frames as base64 data-URL image_url parts — lossless PNG by default, JPEG only when the
// spec asks (image_format=jpeg,quality=N); Response.ImageFormat records which — explicit sampling parameters
// (temperature, top_p 1, seed, max_tokens), logprobs + top_logprobs turned into option probabilities,
// retries with exponential backoff on 5xx, timeouts and connection errors (never on a 2xx whose body
// is not chat JSON: that is llm.ErrBadResponse), typed errors on 4xx
// (too many images, context too long) parsed from vLLM/SGLang/OpenAI/ollama error bodies, and a
// concurrency limit.
//
// Spec: openai:url=http://HOST:PORT/v1,model=NAME[,image_format=png|jpeg,quality=N (jpeg only, default 95),
// input=images|video,server=vllm|sglang,fallback=images,concurrency=N,timeout=60s,retries=N,
// top_logprobs=N (0 = off),prefill=on|off]. "image=" is the former name of image_format and is still read.
//
// input=images (the default) sends one image_url part per frame. input=video sends the frames as
// one video item the server's processor reads as a video: for vLLM (server=vllm, the default) a
// video_url "data:video/jpeg;base64,<f1>,<f2>,…" (vllm/multimodal/media/video.py,
// VideoMediaIO.load_base64; JPEG at quality=N) with the frames' timing in media_io_kwargs (num_frames,
// fps, frames_indices, total_num_frames) and mm_processor_kwargs (fps, do_sample_frames false); for
// SGLang (server=sglang) "data:video/mp4;base64,…", the frames as PNG pictures in an MP4 at a constant
// rate (encode.PNGMP4, lossless) that SGLang's load_video hands to decord or torchcodec and whose
// rate its Qwen-VL processor (smart_nframes at 2 fps) keeps every frame at; frames it would not keep
// are refused by name (llm.ErrVideoInput) or, with fallback=images, sent as image parts (sglang.go).
// Response.InputMode, InputForm, ImageFormat, VideoFPS, VideoTimestampsS and VideoWarnings record what
// was sent and what the server re-derives; an error about the video item is llm.ErrVideoInput naming
// the server flag that governs it.
//
// Confidence: at the first answer position (the first generated token that is not only whitespace or
// "("), each option letter's probability is the sum over its token variants ("A", " A", "ĠA", "▁A") in
// top_logprobs. Letters absent from top_logprobs get 0, then the options are renormalised. When the
// server returns no logprobs, Response.Probs is nil.
package openai
