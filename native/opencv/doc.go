// Package opencv is framesweep's own small edge over the two OpenCV 4.6 pieces the product calls,
// linked without the rest of OpenCV:
//
//   - Resize is cv::resize (INTER_LINEAR, INTER_CUBIC, INTER_AREA) from libopencv_core and
//     libopencv_imgproc (https://docs.opencv.org/4.6.0/da/d54/group__imgproc__transform.html);
//   - EncodeJPEG and DecodeJPEG are what cv::imencode(".jpg") and cv::imdecode(IMREAD_COLOR) do in
//     OpenCV 4.6's imgcodecs (modules/imgcodecs/src/grfmt_jpeg.cpp), done here through the same
//     libjpeg-turbo (libjpeg.so.62) with the same settings: jpeg_set_defaults, then
//     jpeg_set_quality(q, TRUE), baseline, 4:2:0, no optimised tables, no restart interval, one
//     scanline at a time; decoding with libjpeg's defaults (integer ISLOW IDCT, fancy upsampling).
//   - Version is cv::getVersionString.
//
// Why not gocv here: gocv v0.32.0 is one Go package whose C++ calls all twelve OpenCV modules it wraps,
// so a binary that imports it loads highgui (Qt5), videoio (GStreamer), imgcodecs (GDAL, GDCM, HDF5, …):
// 333 shared libraries and about 0.25 CPU-s per start, against FFmpeg's 215. This package needs core,
// imgproc and libjpeg (218). gocv stays the reference binding: resize's tests compare this package with
// gocv byte for byte, and with cv2 (docs/resize.md, "OpenCV").
//
// Every call is one cgo call per image. C never keeps Go memory past a call: Resize wraps the caller's
// buffers in cv::Mat headers for the duration of cv::resize (which returns only after its worker
// threads finish), the JPEG calls read and write the caller's buffers and free everything libjpeg
// allocated before returning. C++ exceptions and libjpeg errors come back as *Error. Without cgo the
// package is empty (resize needs cgo for its native kernels' fast paths and for this).
package opencv
