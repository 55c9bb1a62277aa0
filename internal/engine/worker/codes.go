package worker

import (
	"errors"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/resize"
)

// remoteCodes names the sentinels whose identity survives the process boundary: the worker sends the
// code of the first one its error matches (errors.Is), and the parent's RemoteError.Is maps it back.
// The codes are part of the protocol; keep them stable. Order matters: the first match wins.
var remoteCodes = []struct {
	code string
	err  error
}{
	{"unknown_op", errUnknownOp},
	{"not_found", decode.ErrNotFound},
	{"empty", decode.ErrEmpty},
	{"network_protocol", decode.ErrNetworkProtocol},
	{"not_media_file", decode.ErrNotMediaFile},
	{"truncated", decode.ErrTruncated},
	{"no_such_stream", decode.ErrNoSuchStream},
	{"no_video_stream", decode.ErrNoVideoStream},
	{"unsupported_codec", decode.ErrUnsupportedCodec},
	{"too_large", decode.ErrTooLarge},
	{"too_many_streams", decode.ErrTooManyStreams},
	{"no_frames", decode.ErrNoFrames},
	{"bad_option", decode.ErrBadOption},
	{"out_of_range", decode.ErrOutOfRange},
	{"closed", decode.ErrClosed},
	{"damaged", decode.ErrDamaged}, // before frame_failed: a *DamagedError matches both
	{"frame_failed", decode.ErrFrameFailed},
	{"corrupt", decode.ErrCorrupt},
	{"resize_unknown_kernel", resize.ErrUnknownKernel},
	{"resize_bad_size", resize.ErrBadSize},
}

// errorCode returns the code of the first sentinel err matches, or "".
func errorCode(err error) string {
	for _, c := range remoteCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}

// codeSentinel returns the sentinel for a code.
func codeSentinel(code string) (error, bool) {
	for _, c := range remoteCodes {
		if c.code == code && code != "" {
			return c.err, true
		}
	}
	return nil, false
}
