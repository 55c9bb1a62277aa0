// Package resize turns a decoded RGB frame into the pixels a model's reference preprocessing would
// produce. Its kernels sit behind one small interface, Resizer (shaped like x/image/draw.Scaler):
//
//   - pil-bicubic, pil-bilinear, pil-lanczos: byte-identical to Pillow 9.4's Image.resize, through the
//     SIMD kernels in native/;
//   - torch-bicubic: torchvision's antialiased bicubic on tensors (float32, a = -0.5, horizontal then
//     vertical, clamp, round half to even), the path qwen-vl-utils uses (SAMPLING.md §1);
//   - cv-area, cv-linear, cv-cubic: OpenCV 4.6 cv::resize through native/opencv (which links OpenCV core
//     and imgproc only; gocv v0.32.0 is the tests' reference).
//
// New returns a Resizer with precomputed weights from a concurrency-safe cache keyed by (kernel, source
// size, output size); FanOut produces every output size of one source frame, preparing the source at
// most once. Geometry (which sizes) lives in resize/geom; the cached pipeline's JPEG codec in
// jpeg.go.
package resize
