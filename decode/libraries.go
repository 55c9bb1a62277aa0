package decode

import "github.com/framesweep/framesweep/internal/version"

// Libraries reports the FFmpeg libraries this process runs with, as x.y.z read from the shared
// objects actually mapped (not the version the build was pinned to): libavcodec, libavformat,
// libavutil, libswscale. Another build of FFmpeg may decode or convert to other pixels, so the
// decoder and swscale versions enter every cache key.
func Libraries() map[string]string {
	out := map[string]string{}
	for _, l := range []string{"libavcodec", "libavformat", "libavutil", "libswscale"} {
		out[l] = version.Library(l)
	}
	return out
}
