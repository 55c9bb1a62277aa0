package resize

import "gocv.io/x/gocv"

// OpenCVVersion is the version of the OpenCV library this process runs with (cv::getVersionString,
// not the release gocv was built for): its kernels and its libjpeg-turbo (the cached pipeline's
// JPEG) decide pixels, so it enters the cache key of objects that use them.
func OpenCVVersion() string { return gocv.OpenCVVersion() }
