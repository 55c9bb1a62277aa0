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
// concurrency=N,timeout=60s,retries=N,top_logprobs=N (0 = off),prefill=on|off]. "image=" is the former
// name of image_format and is still read.
//
// Confidence: at the first answer position (the first generated token that is not only whitespace or
// "("), each option letter's probability is the sum over its token variants ("A", " A", "ĠA", "▁A") in
// top_logprobs. Letters absent from top_logprobs get 0, then the options are renormalised. When the
// server returns no logprobs, Response.Probs is nil.
package openai
