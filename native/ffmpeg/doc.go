// Package ffmpeg holds framesweep's own small C helpers for FFmpeg 5.1 calls and fields that go-astiav
// v0.16.0 does not bind (DEPS.md: "add a small helper of our own that works on pointers we own"):
//
//   - FrameErrors reads AVFrame.decode_error_flags and the AV_FRAME_FLAG_CORRUPT bit of a decoded frame
//     (https://ffmpeg.org/doxygen/5.1/structAVFrame.html), through the frame's own pointer;
//   - ProbeFormat names the demuxer avformat_open_input would pick for a file, by the same two steps as
//     libavformat's init_input (av_probe_input_format2 on the name alone, then av_probe_input_buffer2),
//     without opening the demuxer;
//   - BestVideoStream opens a file, runs avformat_find_stream_info and returns av_find_best_stream's
//     choice of video stream (the stream torchcodec, decord and FFmpeg's examples decode by default);
//   - FillRGB24 writes packed RGB24 rows into a frame's plane 0 (go-astiav reads frames' pixels but
//     cannot write them), so encode/ can hand FFmpeg's encoders the frames it is given.
//
// decode/ and encode/ are the users. Every call is one cgo call; C never keeps Go memory past a call;
// every FFmpeg object a helper allocates is freed before it returns. Without cgo the package is empty
// (decode and encode need cgo through go-astiav anyway).
package ffmpeg
