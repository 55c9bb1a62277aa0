// Package encode writes frames as a small lossless video file with FFmpeg (through go-astiav):
// FFmpeg's PNG encoder (RGB24, so every pixel survives) in its MP4 muxer, at a constant frame rate
// given as an exact fraction. It exists for servers that take a video only as a container file
// (SGLang hands a data: video URL to decord or torchcodec, llm/openai): a reader built on FFmpeg
// decodes exactly the frames given, counts them, and derives exactly the rate given.
//
// Ownership: PNGMP4 allocates and frees every FFmpeg object within the call; the pixels are copied
// into FFmpeg's frame by native/ffmpeg.FillRGB24 (go-astiav v0.16.0 cannot write a frame's pixels),
// one cgo call per frame. Nothing is kept between calls.
package encode
