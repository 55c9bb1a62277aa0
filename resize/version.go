package resize

import "github.com/framesweep/framesweep/native/opencv"

// OpenCVVersion is the version of the OpenCV library this process runs with (cv::getVersionString,
// not the release it was built for): its kernels and the libjpeg-turbo its JPEG codec uses (the cached
// pipeline's JPEG) decide pixels, so it enters the cache key of objects that use them.
func OpenCVVersion() string { return opencv.Version() }
