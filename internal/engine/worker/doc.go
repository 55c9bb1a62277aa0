// Package worker runs decoding in supervised child processes, so a crash, hang or memory blow-up inside
// FFmpeg becomes an error for one video instead of the end of a sweep.
//
// The parent (Runner, Probe, Read) re-executes the framesweep binary as `framesweep worker` in its own
// process group, with a deadline (SIGKILL to the group on expiry) and a memory limit (a watchdog polling
// VmRSS in /proc/PID/status, plus an RLIMIT_DATA backstop the worker sets on itself at start-up). How the
// process ended becomes a typed *Error: ErrWorkerCrashed (signal or exit status), ErrWorkerTimeout,
// ErrWorkerMemory, ErrProtocol, ErrStart, with the last stderr line. A handled decode error comes back as
// a *RemoteError that still matches the decode sentinels with errors.Is.
//
// A Runner with Pool > 0 keeps its worker processes (`framesweep worker --loop`), each serving one job
// after another, at most Pool at once; the deadline, the memory limit (the high-water mark reset per
// job) and the typed errors stay per job, and a process is replaced when it dies, goes over the limit,
// times out, is abandoned or keeps too much memory (pool.go, docs/worker.md "Pooled workers").
//
// # Protocol
//
// stdin: one JSON Request, e.g. {"op":"read","path":"v.mp4","indices":[0,5,99],"options":{"threads":1}}.
// stdout: a sequence of messages, each one JSON line:
//
//	{"type":"info","info":{…}}                       probe result (op "probe")
//	{"type":"frame","index":5,"pts":…,"seconds":…,"w":W,"h":H,"bytes":3·W·H}  followed by the raw RGB24 bytes
//	{"type":"done","stats":{…}}                      success; exit status 0
//	{"type":"error","code":"…","message":"…"}        handled failure; exit status 1
//
// Frames arrive in increasing index order, once per distinct index (duplicates in the request are
// served once, as decode.Video.Read does); a frame the decoder concealed carries "damaged":true
// (options "OnDamaged":"keep"). The options are decode.Options as JSON, so "Stream" (the video stream
// index) and "OnDamaged" reach the worker's decode.Open. A "read" may carry "size" to resize in the
// worker; the "error" message may carry the failed frame indices ("failed"), the damaged frames it
// refused ("refused", with "refused_why") and the stats (whose "damaged" lists the damaged frames
// under either policy). stderr: free-form logs.
//
// Test-only ops (hang, crash, partial, abort, alloc, touch, retain, spawn, linger, exit, garbage) exist for
// the supervisor's tests and are reachable only when FRAMESWEEP_WORKER_TESTOPS=1 is in the worker's
// environment.
// docs/worker.md describes the protocol in full.
package worker
