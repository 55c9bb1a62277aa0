// Package serve is framesweep's HTTP API: it hands the engine's exact inputs to other tools (the
// Python client, the lmms-eval and VLMEvalKit adapters in integrations/python, curl) without a process
// per video, through the same pipeline.PlanJobs/Run that `framesweep extract` uses, so a served frames
// tensor and its content key equal what extract writes for that configuration of that video.
//
//	GET  /v1/health                  {"status":"ok", the limits, counters}
//	GET  /v1/probe?video=REL         decode.Info (what `framesweep probe --json` prints)
//	POST /v1/plan    {video, …}      the plan of one configuration, with its key, shape and size
//	POST /v1/frames  {video, …}      the configuration's object (safetensors), or ?format=npy
//
// Safety (docs/serve.md, "Security model"): a video is named by a path under one of the roots and
// opened beneath its root's descriptor (openat2 RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS, or an O_NOFOLLOW
// walk where openat2 is missing): ".." elements, absolute paths outside every root, symlinks leading
// out, non-regular files and URLs are refused (403), missing files are 404; the opened descriptor is
// the only thing read after (hashed, scanned, decoded), so a name swapped after the check changes
// nothing. The Host must name the server (421), requests a browser marks as cross-site are 403, POST
// bodies must be application/json (415). Request bodies are capped (MaxBodyBytes), responses are sized
// from the plan before anything is decoded (MaxResponseBytes), concurrency is capped (MaxInflight,
// 503 beyond), dropped objects are collected at once (memory.go), slow clients time out, and every
// error is a JSON object {"error","code","status"}; a bad request ends only itself.
//
// Routing is Go's ServeMux (a method per endpoint; JSON 404 and 405). Videos are opened through the
// engine's source layer only (pipeline.OpenVideo with the opened file): once to describe a file
// version (hash and index scan, shared by concurrent requests through singleflight, kept in an LRU),
// then per pass with that digest and description (a worker skips its probe; an in-process open checks
// the file still matches, else 409).
//
// Sharing: requests for configurations of one video that arrive within Window of each other are
// planned together and served by one decoding pass (pipeline.Run with every job); a request whose
// content key is already being built waits for that build; finished objects stay in a byte-sized LRU.
// With a Store, objects are read from and written to a content-addressed cache as extract would.
//
// docs/serve.md documents the API with curl examples.
package serve
