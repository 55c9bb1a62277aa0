// framesweep's OpenCV edge (package doc: doc.go). Every function returns 0 on success, else a negative
// code with a message in err (NUL-terminated, at most errn bytes).
#ifndef FRAMESWEEP_NATIVE_OPENCV_H
#define FRAMESWEEP_NATIVE_OPENCV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { NATIVE_CV_OK = 0, NATIVE_CV_ERR = -1, NATIVE_CV_ERR_NOMEM = -2 };

// cv::getVersionString into buf.
int native_cv_version(char *buf, int n);

// cv::resize of a packed 8-bit 3-channel image (sw×sh, sstride bytes per row) into dst (dw×dh,
// dstride bytes per row) with interpolation interp (cv::INTER_*).
int native_cv_resize(const uint8_t *src, int sw, int sh, int sstride, uint8_t *dst, int dw, int dh,
                     int dstride, int interp, char *err, int errn);

// JPEG encode of packed RGB24 (w×h, stride bytes per row) at quality 0..100, as cv::imencode(".jpg")
// with IMWRITE_JPEG_QUALITY. *out is malloc'ed (free it); *outlen its length.
int native_cv_jpeg_encode(const uint8_t *rgb, int w, int h, int stride, int quality, uint8_t **out,
                          size_t *outlen, char *err, int errn);

// The frame header of a JPEG: size and number of components.
int native_cv_jpeg_info(const uint8_t *b, size_t n, int *w, int *h, int *components, char *err, int errn);

// JPEG decode to packed RGB24 (w×h as native_cv_jpeg_info gave, stride bytes per row), as
// cv::imdecode(IMREAD_COLOR) before its BGR swap. A libjpeg warning (corrupt or truncated data) is an
// error here, not a grey-filled picture.
int native_cv_jpeg_decode(const uint8_t *b, size_t n, uint8_t *dst, int w, int h, int stride, char *err,
                          int errn);

#ifdef __cplusplus
}
#endif

#endif
