//go:build cgo

package ffmpeg

// #cgo pkg-config: libavformat libavcodec libavutil
// #include <stdlib.h>
// #include <libavformat/avformat.h>
// #include <libavcodec/avcodec.h>
// #include <libavutil/frame.h>
// #include <libavutil/dict.h>
// #include <libavutil/pixfmt.h>
//
// #include <stdatomic.h>
// #include <string.h>
// #include <libavutil/log.h>
//
// // The log hook: counts the error and concealment messages decoders log (from any thread: FFmpeg's
// // frame threads log from their own), then prints what the caller's level asks for through FFmpeg's
// // default callback. FFmpeg's own level is kept at least at AV_LOG_INFO so they reach the hook.
// static atomic_llong native_decoder_errors;
// static atomic_int native_user_level = AV_LOG_INFO;
//
// static int native_counts(int level, const char *fmt) {
// 	// HEVC's look-up of a reference picture its set names but the decoder lacks (hevc_refs.c
// 	// find_ref_idx) is not counted: FFmpeg 5.1 then makes up a grey picture and flags no frame,
// 	// with frame threads or without, so a re-decode on one thread finds nothing more; and decode logs
// 	// it on purpose for the pictures it leaves out (decode/internal/h26x/hevcrefs.go).
// 	if (fmt && strncmp(fmt, "Could not find ref with POC ", 28) == 0)
// 		return 0;
// 	// error_resilience.c logs its concealment at AV_LOG_INFO, without an error message before it
// 	// when a slice merely ends out of place.
// 	return level <= AV_LOG_ERROR || (level <= AV_LOG_INFO && fmt && strncmp(fmt, "concealing ", 11) == 0);
// }
//
// static void native_log_hook(void *avcl, int level, const char *fmt, va_list vl) {
// 	if (avcl && native_counts(level, fmt)) {
// 		AVClass *c = *(AVClass **)avcl;
// 		AVClassCategory cat = AV_CLASS_CATEGORY_NA;
// 		if (c)
// 			cat = c->get_category ? c->get_category(avcl) : c->category;
// 		if (cat == AV_CLASS_CATEGORY_DECODER)
// 			atomic_fetch_add(&native_decoder_errors, 1);
// 	}
// 	if (level <= atomic_load(&native_user_level))
// 		av_log_default_callback(avcl, level, fmt, vl);
// }
//
// static void native_log_install(int user_level) {
// 	atomic_store(&native_user_level, user_level);
// 	av_log_set_level(user_level > AV_LOG_INFO ? user_level : AV_LOG_INFO);
// 	av_log_set_callback(native_log_hook);
// }
//
// static long long native_decoder_error_count(void) { return atomic_load(&native_decoder_errors); }
//
// static void native_frame_errors(void *p, int *decode_error_flags, int *flags) {
// 	AVFrame *f = (AVFrame *)p;
// 	*decode_error_flags = f->decode_error_flags;
// 	*flags = f->flags;
// }
//
// // native_fill_rgb24 copies h rows of 3·w bytes (stride bytes apart in src) into plane 0 of an
// // AVFrame whose buffer the caller allocated (av_frame_get_buffer) as RGB24 of at least w×h; it
// // makes the frame writable first (a buffer shared with an encoder is copied, not overwritten).
// static int native_fill_rgb24(void *p, const uint8_t *src, int w, int h, int stride) {
// 	AVFrame *f = (AVFrame *)p;
// 	if (f->format != AV_PIX_FMT_RGB24 || f->width < w || f->height < h || !f->data[0])
// 		return AVERROR(EINVAL);
// 	int ret = av_frame_make_writable(f);
// 	if (ret < 0)
// 		return ret;
// 	for (int y = 0; y < h; y++)
// 		memcpy(f->data[0] + (size_t)y * f->linesize[0], src + (size_t)y * stride, (size_t)w * 3);
// 	return 0;
// }
//
// // native_probe_format mirrors libavformat/demux.c init_input: a demuxer that opens files itself
// // (AVFMT_NOFILE, e.g. image2 on a pattern) is chosen from the name alone; otherwise the file is opened
// // (through the options' protocol whitelist) and its first bytes are probed.
// static int native_probe_format(const char *url, const char *opts, const char **name) {
// 	AVProbeData pd = { url, NULL, 0, NULL };
// 	int score = AVPROBE_SCORE_RETRY;
// 	const AVInputFormat *fmt = av_probe_input_format2(&pd, 0, &score);
// 	*name = NULL;
// 	if (fmt) {
// 		*name = fmt->name;
// 		return 0;
// 	}
// 	AVDictionary *d = NULL;
// 	int ret = av_dict_parse_string(&d, opts, "=", "\n", 0);
// 	if (ret < 0) {
// 		av_dict_free(&d);
// 		return ret;
// 	}
// 	AVIOContext *pb = NULL;
// 	ret = avio_open2(&pb, url, AVIO_FLAG_READ, NULL, &d);
// 	av_dict_free(&d);
// 	if (ret < 0)
// 		return ret;
// 	ret = av_probe_input_buffer2(pb, &fmt, url, NULL, 0, 0); // format_probesize's default, as init_input
// 	avio_closep(&pb);
// 	if (ret < 0)
// 		return ret;
// 	if (fmt)
// 		*name = fmt->name;
// 	return 0;
// }
//
// static int native_best_video_stream(const char *url, const char *opts) {
// 	AVDictionary *d = NULL;
// 	int ret = av_dict_parse_string(&d, opts, "=", "\n", 0);
// 	if (ret < 0) {
// 		av_dict_free(&d);
// 		return ret;
// 	}
// 	AVFormatContext *ic = NULL;
// 	ret = avformat_open_input(&ic, url, NULL, &d);
// 	av_dict_free(&d);
// 	if (ret < 0)
// 		return ret;
// 	ret = avformat_find_stream_info(ic, NULL);
// 	if (ret >= 0) {
// 		const AVCodec *dec = NULL;
// 		ret = av_find_best_stream(ic, AVMEDIA_TYPE_VIDEO, -1, -1, &dec, 0);
// 	}
// 	avformat_close_input(&ic);
// 	return ret;
// }
import "C"

import (
	"errors"
	"strings"
	"sync"
	"unsafe"

	"github.com/asticode/go-astiav"
)

// AVFrame.flags and decode_error_flags bits (libavutil/frame.h, FFmpeg 5.1).
const (
	FrameFlagCorrupt = int(C.AV_FRAME_FLAG_CORRUPT)

	DecodeErrorInvalidBitstream  = int(C.FF_DECODE_ERROR_INVALID_BITSTREAM)
	DecodeErrorMissingReference  = int(C.FF_DECODE_ERROR_MISSING_REFERENCE)
	DecodeErrorConcealmentActive = int(C.FF_DECODE_ERROR_CONCEALMENT_ACTIVE)
	DecodeErrorDecodeSlices      = int(C.FF_DECODE_ERROR_DECODE_SLICES)
)

// FrameErrors returns the decoded frame's decode_error_flags (FF_DECODE_ERROR_*) and its flags
// (AV_FRAME_FLAG_*). f must hold a frame (nil: zeros).
func FrameErrors(f *astiav.Frame) (decodeErrorFlags, flags int) {
	if f == nil {
		return 0, 0
	}
	var d, fl C.int
	C.native_frame_errors(f.UnsafePointer(), &d, &fl)
	return int(d), int(fl)
}

// FillRGB24 copies packed RGB rows (h rows of 3·w bytes, stride bytes apart) into plane 0 of f, an
// RGB24 frame of at least w×h whose buffer is allocated (Frame.AllocBuffer), after making it
// writable; go-astiav v0.16.0 binds no way to write a frame's pixels. One cgo call per frame; C
// keeps nothing of pix.
func FillRGB24(f *astiav.Frame, pix []byte, w, h, stride int) error {
	if f == nil || w <= 0 || h <= 0 || stride < 3*w || len(pix) < (h-1)*stride+3*w {
		return errors.New("ffmpeg: FillRGB24: frame, size or buffer out of range")
	}
	if ret := C.native_fill_rgb24(f.UnsafePointer(), (*C.uint8_t)(unsafe.Pointer(&pix[0])), C.int(w), C.int(h), C.int(stride)); ret < 0 {
		return astiav.Error(ret)
	}
	return nil
}

// Option is one AVFormatContext/AVIO option (key=value) for ProbeFormat and BestVideoStream.
type Option struct{ Key, Value string }

func joinOptions(opts []Option) (string, error) {
	var b strings.Builder
	for _, o := range opts {
		if strings.ContainsAny(o.Key, "=\n") || strings.Contains(o.Value, "\n") {
			return "", errors.New("ffmpeg: option key or value contains '=' or a newline")
		}
		b.WriteString(o.Key)
		b.WriteByte('=')
		b.WriteString(o.Value)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// ProbeFormat returns the short name list of the demuxer FFmpeg would choose for url (e.g. "hls",
// "concat", "image2", "mov,mp4,m4a,3gp,3g2,mj2"), or "" when no demuxer recognises the data. opts
// are the I/O options (protocol_whitelist…); at most 1 MiB is read (format_probesize's default).
// An I/O error is returned as go-astiav's Error.
func ProbeFormat(url string, opts []Option) (string, error) {
	o, err := joinOptions(opts)
	if err != nil {
		return "", err
	}
	cu, co := C.CString(url), C.CString(o)
	defer C.free(unsafe.Pointer(cu))
	defer C.free(unsafe.Pointer(co))
	var name *C.char
	if ret := C.native_probe_format(cu, co, &name); ret < 0 {
		return "", astiav.Error(ret)
	}
	if name == nil {
		return "", nil
	}
	return C.GoString(name), nil // a static string of the demuxer's definition
}

// BestVideoStream opens url with opts (the same options the caller's own open uses), reads the stream
// info and returns av_find_best_stream(AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0): the index of the
// video stream FFmpeg ranks best among those it has a decoder for. The errors are go-astiav's Error
// values (astiav.ErrStreamNotFound, astiav.ErrDecoderNotFound, or the open's error).
func BestVideoStream(url string, opts []Option) (int, error) {
	o, err := joinOptions(opts)
	if err != nil {
		return -1, err
	}
	cu, co := C.CString(url), C.CString(o)
	defer C.free(unsafe.Pointer(cu))
	defer C.free(unsafe.Pointer(co))
	ret := C.native_best_video_stream(cu, co)
	if ret < 0 {
		return -1, astiav.Error(ret)
	}
	return int(ret), nil
}

var logOnce sync.Once

// InstallLogHook routes FFmpeg's log through a hook that counts decoder errors (DecoderErrors) and
// prints at FFmpeg's current level. Idempotent; SetLogLevel installs it too.
func InstallLogHook() {
	logOnce.Do(func() { C.native_log_install(C.av_log_get_level()) })
}

// SetLogLevel sets the level printed to stderr (an AV_LOG_* value, e.g. astiav.LogLevelQuiet) while
// the hook keeps counting decoder errors. Use it instead of av_log_set_level.
func SetLogLevel(level int) {
	logOnce.Do(func() {})
	C.native_log_install(C.int(level))
}

// DecoderErrors is the number of error messages (AV_LOG_ERROR or worse) and error-concealment reports
// ("concealing N DC, N AC, N MV errors", AV_LOG_INFO) any decoder in this process has logged so far (a
// monotonic counter: compare two readings), but HEVC's "Could not find ref with POC" (a missing
// reference FFmpeg replaces with a grey picture and flags on no frame). FFmpeg 5.1's frame-threaded decoders lose a frame's
// decode_error_flags (the output is referenced before concealment runs), so their error messages
// are what tells a caller that a frame may be damaged.
func DecoderErrors() int64 {
	InstallLogHook()
	return int64(C.native_decoder_error_count())
}
