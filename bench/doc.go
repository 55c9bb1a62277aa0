// Package bench measures framesweep against baselines in the same run and reports ratios, never
// absolute pass/fail times.
//
// Modes (each a function here, shared by `go test -bench` and `framesweep bench MODE`):
//
//   - grid: a generated 60 s 1080p30 H.264 video (GOP 250 and GOP 60) serving the union of the
//     {16,32,64,128,256} uniform budgets; decode-once wall time against a full `ffmpeg -threads 1 -i V
//     -f null -` decode and against decoding each budget separately (a fresh Open and Read per budget).
//   - decode: decoding every frame to RGB24 against `ffmpeg -pix_fmt rgb24 -f null -`, per thread count;
//     optionally on a hardware device, compared frame by frame (count, PSNR) with the CPU.
//   - memory: peak RSS while holding 256 frames resized to 448×448 from the 1080p video, served by the
//     engine (pipeline.PlanFrames into a MemorySink; with a worker, the worker decodes).
//
// Every mode opens videos through the engine's source layer (pipeline.OpenSource), as every other
// reader of videos does.
//   - peers: one grid's inputs built by `framesweep extract` (the binary) and by what users run today —
//     PyAV per configuration as lmms-eval's read_video_pyav, PyAV decode-once, OpenCV seeks (the Python
//     scripts in peers/, embedded) — and a bare ffmpeg decode, each its own process (wall, and CPU and
//     peak RSS from wait4 through GNU time), with the peers' indices and PSNR checked against framesweep's.
//
// Every Row carries the commit, CPU brand, library versions and thread count (STYLE.md F 21–22), and
// prints as JSON, CSV, or Go benchmark text that benchstat reads.
package bench
