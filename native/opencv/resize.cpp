//go:build cgo

// cv::resize and the version string; every entry point catches every exception (STYLE.md A4).
#include <cstring>
#include <exception>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "opencv.h"

static void native_cv_msg(char *err, int errn, const char *msg) {
	if (err == nullptr || errn <= 0)
		return;
	std::strncpy(err, msg, (size_t)errn - 1);
	err[errn - 1] = '\0';
}

extern "C" int native_cv_version(char *buf, int n) {
	try {
		native_cv_msg(buf, n, cv::getVersionString().c_str());
		return NATIVE_CV_OK;
	} catch (...) {
		native_cv_msg(buf, n, "");
		return NATIVE_CV_ERR;
	}
}

extern "C" int native_cv_resize(const uint8_t *src, int sw, int sh, int sstride, uint8_t *dst, int dw, int dh,
                                int dstride, int interp, char *err, int errn) {
	try {
		// Headers over the caller's buffers: no copies, and nothing outlives the call.
		const cv::Mat in(sh, sw, CV_8UC3, const_cast<uint8_t *>(src), (size_t)sstride);
		cv::Mat out(dh, dw, CV_8UC3, dst, (size_t)dstride);
		cv::resize(in, out, cv::Size(dw, dh), 0, 0, interp);
		// cv::resize writes in place when dst already has the size and type; anything else would have
		// gone to a buffer of its own and been lost.
		if (out.data != dst || out.rows != dh || out.cols != dw || out.type() != CV_8UC3) {
			native_cv_msg(err, errn, "cv::resize did not write the destination buffer");
			return NATIVE_CV_ERR;
		}
		return NATIVE_CV_OK;
	} catch (const std::bad_alloc &) {
		native_cv_msg(err, errn, "out of memory");
		return NATIVE_CV_ERR_NOMEM;
	} catch (const std::exception &e) {
		native_cv_msg(err, errn, e.what());
		return NATIVE_CV_ERR;
	} catch (...) {
		native_cv_msg(err, errn, "unknown C++ exception");
		return NATIVE_CV_ERR;
	}
}
