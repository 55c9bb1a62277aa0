// Package decode opens local video files with FFmpeg (through go-astiav), builds a frame index from a
// demux scan of every packet of the primary video stream, and serves any set of frame indices from one
// forward decoding pass (the decode-once executor).
//
// Frame semantics (DESIGN.md): frame i is the i-th frame FFmpeg's decoder outputs for the first video
// stream, in presentation order. The index is built without decoding: packets the decoder drops
// (edit-list discards, hidden VP8/VP9 frames) are left out, so NumFrames equals what `ffprobe
// -count_frames` reports. Frames are converted to RGB24 exactly as `ffmpeg -i V -pix_fmt rgb24` does
// (same libswscale through the same filter graph), with the display rotation/reflection applied unless
// Options.NoAutorotate is set.
//
// Ownership: Open returns a *Video that owns every FFmpeg resource it uses; Close releases them and is
// idempotent. A Frame handed to a Read callback is borrowed and valid only during the callback.
// A Video is not safe for concurrent use.
package decode
