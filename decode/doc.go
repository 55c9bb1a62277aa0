// Package decode opens local video files with FFmpeg (through go-astiav), builds a frame index from a
// demux scan of every packet of the selected video stream, and serves any set of frame indices from one
// forward decoding pass (the decode-once executor).
//
// Frame semantics (DESIGN.md): frame i is the i-th frame FFmpeg's decoder outputs for the video stream,
// in presentation order. The stream is FFmpeg's best video stream (av_find_best_stream, as torchcodec
// and decord choose) unless Options.Stream names one (decode.StreamAt(n): stream n of the file, as
// ffprobe numbers them; ErrNoSuchStream when it is not a video stream); Info.StreamIndex is the one
// used and Info.StreamSelection says "best" or "requested". Callers that key results by stream (cache
// keys, manifests) should use Info.StreamIndex, the resolved index, not the option. The index is built without decoding: packets the decoder drops
// (edit-list discards, hidden VP8/VP9 frames) are left out, so NumFrames equals what `ffprobe
// -count_frames` reports. Frames are converted to RGB24 exactly as `ffmpeg -i V -pix_fmt rgb24` does
// (same libswscale through the same filter graph), with the display rotation/reflection applied unless
// Options.NoAutorotate is set.
//
// Damaged frames: a frame the decoder produced by concealing corrupt data (FFmpeg's decode_error_flags
// or corrupt flag) is damaged. Options.OnDamaged chooses: DamagedFail (the zero value, the default
// everywhere) refuses it — Read does not deliver it and returns a *DamagedError (errors.Is ErrDamaged
// and ErrFrameFailed; DamagedFrames(err) lists the indices) after delivering the others —, DamagedKeep
// delivers it with Frame.Damaged set. Stats.Damaged (JSON "damaged") lists the damaged requested frames
// under both policies and Stats.OnDamaged the policy in force.
//
// Inputs: only media container/elementary-stream demuxers may open a file; playlists, lists and
// patterns (HLS, DASH, concat/ffconcat, image2 …) are refused with a *RefusedError (ErrNotMediaFile).
// Streams whose headers claim more than Options.MaxFrameArea are ErrTooLarge; MP4/MOV files cut short
// are ErrTruncated.
//
// Ownership: Open returns a *Video that owns every FFmpeg resource it uses; Close releases them and is
// idempotent. A Frame handed to a Read callback is borrowed and valid only during the callback.
// A Video is not safe for concurrent use.
package decode
