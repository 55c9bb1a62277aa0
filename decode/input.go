package decode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/asticode/go-astiav"
	"github.com/framesweep/framesweep/native/ffmpeg"
)

// mediaDemuxers are the only demuxers allowed to open an input (FFmpeg's format_whitelist, which
// nested opens inherit too): media containers and elementary streams that read their own file and
// nothing else. Playlists, lists and patterns (hls, dash, concat, image2, imf …), whose demuxers open
// further files, are refused before FFmpeg opens them; so is anything else not listed (subtitles,
// still images, devices). mov's external data references stay off (its enable_drefs default).
var mediaDemuxers = []string{
	// video containers
	"mov", "matroska", "avi", "flv", "live_flv", "mpegts", "mpeg", "mxf", "asf", "ogg", "nut", "nuv",
	"wtv", "gxf", "lxf", "rm", "dv", "yuv4mpegpipe", "ivf", "obu", "gif", "apng", "flic", "smk", "bink",
	"thp", "roq", "nsv", "swf", "r3d", "mpjpeg", "smjpeg",
	// video elementary streams
	"h261", "h263", "h264", "hevc", "m4v", "mpegvideo", "vc1", "vc1test", "cavsvideo", "avs2", "avs3",
	"dirac", "dnxhd", "av1", "mjpeg", "mjpeg_2000",
	// audio containers (they may carry cover art; without it they have no video stream)
	"mp3", "wav", "w64", "flac", "aac", "ac3", "eac3", "aiff", "caf",
}

// formatWhitelist is mediaDemuxers as FFmpeg's format_whitelist option (av_match_list matches any
// name of a demuxer's comma-separated name list, e.g. "mov" for "mov,mp4,m4a,3gp,3g2,mj2").
var formatWhitelist = strings.Join(mediaDemuxers, ",")

// isMediaDemuxer reports whether a demuxer name list (as FFmpeg writes it) is on mediaDemuxers.
func isMediaDemuxer(names string) bool {
	for _, n := range strings.Split(names, ",") {
		for _, m := range mediaDemuxers {
			if n == m {
				return true
			}
		}
	}
	return false
}

// refusal describes, for the error message, what a refused demuxer's input is.
func refusal(name string) *RefusedError {
	e := &RefusedError{Format: name}
	switch {
	case name == "hls":
		e.What, e.Why = "an HLS playlist", "its demuxer opens the media files it names"
	case name == "dash":
		e.What, e.Why = "a DASH manifest", "its demuxer opens the media files it names"
	case name == "concat":
		e.What, e.Why = "a concat/ffconcat list", "its demuxer opens the media files it names"
	case name == "image2":
		e.What, e.Why = "an image-sequence pattern", "its demuxer opens every file the pattern matches"
	case name == "imf":
		e.What, e.Why = "an IMF composition playlist", "its demuxer opens the track files it names"
	case name == "mlv":
		e.What, e.Why = "a Magic Lantern video", "its demuxer opens the sibling .M00, .M01 … files"
	case name == "vobsub":
		e.What, e.Why = "a VobSub index", "its demuxer opens the .sub file beside it"
	case name == "sdp" || name == "rtp" || name == "rtsp":
		e.What, e.Why = "a network session description", "only local media files are read"
	case name == "image2pipe" || strings.HasSuffix(name, "_pipe"):
		e.What, e.Why = "a still image ("+name+")", "framesweep reads videos in media containers"
	default:
		e.What, e.Why = "a file FFmpeg reads with its "+name+" demuxer", "that demuxer is not one of the media container demuxers framesweep allows (docs/decode.md)"
	}
	return e
}

// checkFormat names the demuxer FFmpeg would choose for url and refuses any that is not a media
// demuxer. It returns the demuxer's name ("" when FFmpeg recognises nothing, or the probe could not
// read the file: the open that follows then reports the cause).
func checkFormat(url string) (string, error) {
	name, err := ffmpeg.ProbeFormat(url, []ffmpeg.Option{{Key: "protocol_whitelist", Value: "file"}})
	if err != nil || name == "" {
		return "", nil
	}
	if !isMediaDemuxer(name) {
		return name, refusal(name)
	}
	return name, nil
}

// isMovFamily reports a demuxer name list of the ISO BMFF family (MP4, MOV, 3GP …).
func isMovFamily(name string) bool { return strings.HasPrefix(name, "mov,") || name == "mov" }

// mp4Truncation walks the top-level boxes of an ISO BMFF file (size and type only) and says how it is
// incomplete: cut inside a box, or without a moov box. "" when its box structure is whole.
func mp4Truncation(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	size := st.Size()
	var hdr [16]byte
	off := int64(0)
	sawMoov, sawMdat := false, false
	for off < size {
		if size-off < 8 {
			return fmt.Sprintf("the file ends inside a box header at byte %d", off)
		}
		if _, err := f.ReadAt(hdr[:8], off); err != nil {
			return ""
		}
		n := int64(binary.BigEndian.Uint32(hdr[:4]))
		typ := string(hdr[4:8])
		hl := int64(8)
		switch n {
		case 0: // the box runs to the end of the file
			n = size - off
		case 1:
			if size-off < 16 {
				return fmt.Sprintf("the file ends inside the %q box header at byte %d", typ, off)
			}
			if _, err := f.ReadAt(hdr[8:16], off+8); err != nil && !errors.Is(err, io.EOF) {
				return ""
			}
			n = int64(binary.BigEndian.Uint64(hdr[8:16]))
			hl = 16
		}
		if n < hl || !isFourCC(typ) {
			return "" // not (or no longer) an ISO BMFF box structure: FFmpeg's own error says more
		}
		if off == 0 && !strings.Contains(" ftyp moov mdat free skip wide pnot uuid styp sidx moof junk pdin meta ", " "+typ+" ") {
			return "" // does not start like an ISO BMFF file
		}
		switch typ {
		case "moov":
			sawMoov = true
		case "mdat":
			sawMdat = true
		}
		if off+n > size {
			return fmt.Sprintf("the file ends inside its %q box (%d of its %d bytes are present)", typ, size-off, n)
		}
		off += n
	}
	if !sawMoov && sawMdat {
		return "it has media data but no \"moov\" box (an unfinished recording)"
	}
	return ""
}

// selectStream picks the video stream: the requested one (Options.Stream), or FFmpeg's best
// (av_find_best_stream). With a single video stream that is the one; with several, the choice needs
// FFmpeg's own ranking (disposition, frames seen while probing, bit rate), which go-astiav v0.16 does
// not bind: native/ffmpeg opens the file once more with the same options to ask it.
func (v *Video) selectStream(url string, openOpts []ffmpeg.Option) error {
	streams := v.fc.Streams()
	v.videoStreams = v.videoStreams[:0]
	for _, s := range streams {
		if s.CodecParameters().MediaType() == astiav.MediaTypeVideo {
			v.videoStreams = append(v.videoStreams, s.Index())
		}
	}
	if want := v.opts.Stream; want != nil {
		n := *want
		if n < 0 || n >= len(streams) {
			return fmt.Errorf("%w: stream %d requested, the file has %d streams (0..%d)", ErrNoSuchStream, n, len(streams), len(streams)-1)
		}
		if mt := streams[n].CodecParameters().MediaType(); mt != astiav.MediaTypeVideo {
			return fmt.Errorf("%w: stream %d is %s, not video (video streams: %v)", ErrNoSuchStream, n, mt, v.videoStreams)
		}
		v.streamIndex = n
		v.streamBy = "requested"
		return nil
	}
	if v.opts.FirstVideoStream { // PyAV's container.streams.video[0]
		if len(v.videoStreams) == 0 {
			return ErrNoVideoStream
		}
		v.streamIndex = v.videoStreams[0]
		v.streamBy = "first"
		return nil
	}
	v.streamBy = "best"
	switch len(v.videoStreams) {
	case 0:
		return ErrNoVideoStream
	case 1:
		v.streamIndex = v.videoStreams[0]
		return nil
	}
	best, err := ffmpeg.BestVideoStream(url, openOpts)
	switch {
	case errors.Is(err, astiav.ErrDecoderNotFound):
		return fmt.Errorf("%w: none of the video streams %v has a decoder", ErrUnsupportedCodec, v.videoStreams)
	case errors.Is(err, astiav.ErrStreamNotFound):
		return ErrNoVideoStream
	case err != nil:
		return classifyOpenErr(err, v.path)
	case best < 0 || best >= len(streams) || streams[best].CodecParameters().MediaType() != astiav.MediaTypeVideo:
		return fmt.Errorf("%w: FFmpeg's best video stream %d is not a video stream of this open", ErrCorrupt, best)
	}
	v.streamIndex = best
	return nil
}

// isFourCC reports a plausible box type: four printable ASCII characters (or ©, as QuickTime uses).
func isFourCC(t string) bool {
	for i := 0; i < len(t); i++ {
		if c := t[i]; (c < 0x20 || c > 0x7e) && c != 0xa9 {
			return false
		}
	}
	return len(t) == 4
}
