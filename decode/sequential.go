package decode

import (
	"errors"
	"fmt"

	"github.com/asticode/go-astiav"
	"github.com/framesweep/framesweep/rgb"
)

// ErrDecoderRefused: the decoder returned an error for a packet (avcodec_send_packet or
// avcodec_receive_frame failed), or the demuxer for a read, during a Sequential pass. Python readers
// built on PyAV raise at that point (av.error.InvalidDataError …); what a harness does next is its own
// rule (loader/).
var ErrDecoderRefused = errors.New("the decoder or demuxer returned an error")

// SeqError is a Sequential pass stopped by the decoder or the demuxer: Packet is the number of packets
// of the stream read before (0-based position of the failing one), Frames the pictures delivered before.
// It matches ErrDecoderRefused.
type SeqError struct {
	Op     string // "seek", "send_packet", "receive_frame", "read_frame"
	Packet int
	Frames int
	Err    error
}

func (e *SeqError) Error() string {
	return fmt.Sprintf("%s failed at packet %d (after %d frames): %v", e.Op, e.Packet, e.Frames, e.Err)
}
func (e *SeqError) Is(target error) bool { return target == ErrDecoderRefused }
func (e *SeqError) Unwrap() error        { return e.Err }

// SeqOptions configure one Sequential pass.
type SeqOptions struct {
	// FrameThreads: the decoder runs frame and slice threads (PyAV's thread_type "AUTO", which
	// lmms-eval sets); false: slice threads only, PyAV's default thread_type (torchvision's
	// read_video). The thread count is Options.Threads (0 = FFmpeg's automatic count, PyAV's default).
	FrameThreads bool
	// SeekStart seeks to timestamp 0 (backward) right after opening, before reading, as PyAV's
	// container.seek(0, backward=True, stream=…) does: torchvision's read_video always does it, on
	// the video stream; lmms-eval's every-frame fallback does it on the container (SeekStream -1).
	// A demuxer that cannot seek ends the pass with a *SeqError (Op "seek").
	SeekStart  bool
	SeekStream int // the stream index to seek on (-1: the container's default, AV_TIME_BASE units)
}

// SeqFrame is one picture as the decoder output it during a Sequential pass, borrowed: valid only
// during the callback.
type SeqFrame struct {
	N      int   // output ordinal: the decoder's N-th picture of this pass (0-based)
	PTS    int64 // the frame's pts (AVFrame.pts) in the stream time base, when HasPTS
	HasPTS bool  // false when FFmpeg gave the frame no pts (PyAV's frame.pts is None)
	Width  int   // decoded size (before any rotation)
	Height int

	r   *seqReader
	f   *astiav.Frame
	img *rgb.Image
	err error
}

// RGB converts the frame with the pass's colour mode (Options.Colour) and orientation; the image is
// borrowed like the frame. Calling it again returns the same image.
func (f *SeqFrame) RGB() (*rgb.Image, error) {
	if f.img == nil && f.err == nil {
		f.img, f.err = f.r.conv.convert(f.f, f.r.v.stream().TimeBase())
		if f.err != nil {
			f.err = wrap(f.r.v.name, "convert", fmt.Errorf("output frame %d: %w", f.N, f.err))
		} else {
			f.r.st.Converted++
		}
	}
	return f.img, f.err
}

// SeqStats report what one Sequential pass did.
type SeqStats struct {
	Packets   int  `json:"packets"`   // packets of the stream read (and sent)
	Frames    int  `json:"frames"`    // pictures the decoder output
	Converted int  `json:"converted"` // of those, converted to RGB
	Stopped   bool `json:"stopped"`   // the callback ended the pass before the end of the stream
}

// Sequential decodes the video's stream from its first packet, sending every packet in file order as
// Python readers built on PyAV do (container.decode(video=0): av_read_frame, avcodec_send_packet,
// then every frame avcodec_receive_frame gives, then a flush at the end), and calls fn for each
// picture in decoder output order. Nothing is skipped, sought or identified by the index: frame N is
// the decoder's N-th output, whatever its pts. fn returns stop=true to end the pass early.
//
// The first error of the decoder (send or receive) or of the demuxer (other than end of file) ends
// the pass with a *SeqError (ErrDecoderRefused), after the frames already delivered, which is where
// PyAV raises. An error from fn is returned as is. The Video's Read is not affected; the pass opens
// the file again, so the Video's state is unchanged.
func (v *Video) Sequential(o SeqOptions, fn func(f *SeqFrame) (stop bool, err error)) (SeqStats, error) {
	var st SeqStats
	if v.closed {
		return st, wrap(v.name, "read", ErrClosed)
	}
	if v.hw.Device != "" {
		return st, wrap(v.name, "read", fmt.Errorf("%w: a sequential pass decodes on the CPU (hwaccel %s)", ErrBadOption, v.hw.Device))
	}
	r := &seqReader{v: v, o: o, st: &st, fn: fn}
	err := r.run()
	r.close()
	return st, err
}

type seqReader struct {
	v    *Video
	o    SeqOptions
	st   *SeqStats
	fn   func(*SeqFrame) (bool, error)
	dec  *astiav.CodecContext
	pkt  *astiav.Packet
	frm  *astiav.Frame
	conv *converter
	seq  SeqFrame
	stop bool
}

func (r *seqReader) close() {
	if r.dec != nil {
		r.dec.Free()
		untrack(r.dec)
		r.dec = nil
	}
	if r.frm != nil {
		r.frm.Free()
		untrack(r.frm)
		r.frm = nil
	}
	if r.pkt != nil {
		r.pkt.Free()
		untrack(r.pkt)
		r.pkt = nil
	}
	r.conv.Close()
	r.conv = nil
}

func (r *seqReader) run() error {
	v := r.v
	// A fresh demuxer, as a Python reader opens the file: packets from the first one, in file order.
	// openInput replaces v.fc: the index scan's demuxer is closed once a new one is in its place, and
	// kept when none could be opened (the Video stays usable and Close frees what it holds).
	old := v.fc
	v.fc = nil
	err := v.openInput()
	if v.fc == nil {
		v.fc = old
	} else {
		closeDemuxer(old)
	}
	if err != nil {
		return v.explain("open", err)
	}
	r.pkt = astiav.AllocPacket()
	r.frm = astiav.AllocFrame()
	track(r.pkt)
	track(r.frm)
	r.conv = v.newConverter()
	if r.o.SeekStart {
		if err := v.fc.SeekFrame(r.o.SeekStream, 0, astiav.NewSeekFlags(astiav.SeekFlagBackward)); err != nil {
			return wrap(v.name, "decode", &SeqError{Op: "seek", Err: err})
		}
	}
	if err := r.openDecoder(); err != nil {
		return err
	}
	for !r.stop {
		err := v.fc.ReadFrame(r.pkt)
		if errors.Is(err, astiav.ErrEof) {
			break
		}
		if err != nil {
			return wrap(v.name, "decode", &SeqError{Op: "read_frame", Packet: r.st.Packets, Frames: r.st.Frames, Err: err})
		}
		if r.pkt.StreamIndex() != v.streamIndex {
			r.pkt.Unref()
			continue
		}
		err = r.send(r.pkt)
		r.pkt.Unref()
		r.st.Packets++
		if err != nil {
			return err
		}
	}
	if r.stop {
		r.st.Stopped = true
		return nil
	}
	return r.send(nil) // flush: the pictures the decoder still holds
}

func (r *seqReader) openDecoder() error {
	types := astiav.ThreadTypeSlice
	if r.o.FrameThreads {
		types |= astiav.ThreadTypeFrame
	}
	cc, err := r.v.openDecoder(r.v.stream(), r.v.opts.Threads, types, nil)
	if err != nil {
		return err
	}
	r.dec = cc
	return nil
}

// send is PyAV's CodecContext.decode(packet): one avcodec_send_packet (nil: flush), whose error
// raises, then avcodec_receive_frame until EAGAIN/EOF, whose other errors raise.
func (r *seqReader) send(p *astiav.Packet) error {
	if err := r.dec.SendPacket(p); err != nil && !errors.Is(err, astiav.ErrEof) {
		return wrap(r.v.name, "decode", &SeqError{Op: "send_packet", Packet: r.st.Packets, Frames: r.st.Frames, Err: err})
	}
	for !r.stop {
		err := r.dec.ReceiveFrame(r.frm)
		if errors.Is(err, astiav.ErrEagain) || errors.Is(err, astiav.ErrEof) {
			return nil
		}
		if err != nil {
			return wrap(r.v.name, "decode", &SeqError{Op: "receive_frame", Packet: r.st.Packets, Frames: r.st.Frames, Err: err})
		}
		err = r.deliver(r.frm)
		r.frm.Unref()
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *seqReader) deliver(f *astiav.Frame) error {
	v := r.v
	if w, h := f.Width(), f.Height(); w*h > v.opts.MaxFrameArea {
		return wrap(v.name, "decode", fmt.Errorf("%w: decoded frame %dx%d > %d pixels", ErrTooLarge, w, h, v.opts.MaxFrameArea))
	}
	pts := f.Pts()
	r.seq = SeqFrame{N: r.st.Frames, PTS: pts, HasPTS: pts != astiav.NoPtsValue, Width: f.Width(), Height: f.Height(), r: r, f: f}
	r.st.Frames++
	stop, err := r.fn(&r.seq)
	r.seq.f, r.seq.img = nil, nil
	if err != nil {
		return err
	}
	r.stop = stop
	return nil
}
