package decode

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/asticode/go-astiav"
	"github.com/framesweep/framesweep/native/ffmpeg"
)

// reorderSlack bounds how many packets past a frame's own packet we feed before declaring that frame
// lost: H.264/HEVC reorder at most 16 pictures; frame threads add their own delay on top.
const reorderSlack = 20

// errStopped ends a parallel segment's reader when the Read stops (the callback failed, or an
// earlier segment ended the Read with an error); Read never returns it.
var errStopped = errors.New("decode: read stopped")

// segResult is what one segment left besides its frames: the targets not produced, those refused as
// damaged (OnDamaged fail) and what FFmpeg flagged on the first of them.
type segResult struct {
	failed  []*FrameError
	refused []int
	cause   string
}

// reader is one decoder with its own demuxer: it decodes segments (schedule.go) one after the other and
// hands their frames to fn in ascending order.
type reader struct {
	v     *Video
	sched *schedule
	st    Stats // this reader's counts; Read adds them up
	fn    func(*Frame) error
	// stopped, when set, is polled between packets (parallel segments: the Read has ended).
	stopped func() bool
	threads int // threads per decoder (0: FFmpeg's automatic count)

	fc       *astiav.FormatContext // the demuxer: v.fc (borrowed) or one of its own
	ownFC    bool
	fresh    bool // fc was just opened: positioned at the start, nothing read
	targets  []int
	ti       int // next unresolved target
	segEnd   int // the last packet of the segment being decoded
	res      *segResult
	pkt      *astiav.Packet
	frm, sw  *astiav.Frame
	dec      *astiav.CodecContext
	conv     *converter
	pending  bool  // pkt holds the packet at curDpos, not yet sent
	drained  bool  // the decoder was flushed (end of a segment): a new one is needed to go on
	curDpos  int   // decode position of the last packet read; -1: not positioned
	startK   int   // dpos the decoder started from
	validPTS int64 // frames with a smaller pts are leading pictures of startK: not trustworthy
	outCount int   // frames output since startK (counting mode)
	lastErr  error // last decoder error, the cause of lost frames
	retried  map[int]int
	forceKey int // ≥ 0: reposition at this keyframe before going on (a retry)
	// hwDeclined: the decoder's format negotiation offered no hardware format, frames came from the CPU.
	hwDeclined bool
	hwFmt      astiav.PixelFormat // the decoder's hardware frame format (set when v.hw.Device != "")
	// errMark is ffmpeg.DecoderErrors() when last checked; singleThread: a decoder error was logged
	// while frame threads decoded, so the pass goes on with one thread, whose frames carry exact flags.
	errMark      int64
	singleThread bool
	frameOut     Frame
	// drop: unneeded non-reference pictures are left out of the decoder (nonref.go); dropped marks,
	// by decode position, the packets left out (the loss check counts only those sent).
	drop    bool
	dropped []bool
}

func (v *Video) newReader(p *schedule, fn func(*Frame) error) *reader {
	r := &reader{v: v, sched: p, fn: fn, threads: p.threads, retried: map[int]int{}, curDpos: -1, forceKey: -1, drop: p.drop}
	r.st.Damaged = []int{}
	if r.drop {
		r.dropped = make([]bool, len(v.pkts))
	}
	r.pkt = astiav.AllocPacket()
	r.frm = astiav.AllocFrame()
	r.sw = astiav.AllocFrame()
	track(r.pkt)
	track(r.frm)
	track(r.sw)
	r.conv = v.newConverter()
	return r
}

// newConverter is the RGB conversion of this video's frames: the orientation filter when rotation is
// applied, the colour mode of the options (Read's readers and the sequential pass alike).
func (v *Video) newConverter() *converter {
	filter := ""
	if v.orient.Applied {
		filter = v.orient.Filter()
	}
	return newConverterMode(filter, v.opts.Colour)
}

// useDemuxer gives the reader its demuxer: v.fc (borrowed; the one-decoder schedule and the first parallel
// reader) or one of its own, opened now.
func (r *reader) useDemuxer(own bool) error {
	if !own {
		r.fc = r.v.fc
		return nil
	}
	fc, err := r.v.openDemuxer()
	if err != nil {
		return wrap(r.v.name, "read", err)
	}
	r.fc, r.ownFC, r.fresh = fc, true, true
	return nil
}

func (r *reader) stream() *astiav.Stream { return r.fc.Streams()[r.v.streamIndex] }

func (r *reader) close() {
	if r.dec != nil {
		r.dec.Free()
		untrack(r.dec)
		r.dec = nil
	}
	for _, f := range []**astiav.Frame{&r.frm, &r.sw} {
		if *f != nil {
			(*f).Free()
			untrack(*f)
			*f = nil
		}
	}
	if r.pkt != nil {
		r.pkt.Free()
		untrack(r.pkt)
		r.pkt = nil
	}
	r.conv.Close()
	r.conv = nil
	if r.ownFC {
		closeDemuxer(r.fc)
	}
	r.fc, r.ownFC = nil, false
}

// runSegment decodes one segment: from its keyframe, sending what its targets need, up to its last
// packet, then drains the decoder. A target lost on the way is retried from an earlier keyframe
// (fail) before it is reported in res.
func (r *reader) runSegment(s *segment, res *segResult) error {
	v := r.v
	r.targets, r.ti, r.segEnd, r.res = s.targets, 0, s.end, res
	if r.conv.scaleOpts == "" && (v.hw.Device != "" || v.explicitColour) {
		cp := r.stream().CodecParameters()
		r.conv.scaleOpts = colourScaleOpts(cp.ColorSpace(), cp.ColorRange())
	}
	r.forceKey = -1
	if err := r.positionAt(s.key); err != nil {
		return err
	}
	for r.ti < len(r.targets) {
		if r.stopped != nil && r.stopped() {
			return errStopped
		}
		t := r.targets[r.ti]
		if r.forceKey >= 0 {
			k := r.forceKey
			r.forceKey = -1
			if err := r.positionAt(k); err != nil {
				return err
			}
		}
		if !r.pending {
			if r.curDpos >= r.segEnd {
				if err := r.endOfRun(nil); err != nil {
					return err
				}
				continue
			}
			ok, err := r.next()
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
		}
		r.pending = false
		if err := r.send(r.pkt); err != nil {
			r.pkt.Unref()
			return err
		}
		r.pkt.Unref()
		r.checkLost(t)
	}
	return nil
}

// next reads the next packet of the stream into r.pkt. It returns false when there is nothing to
// send: another stream's packet, a non-reference picture left out, or the end of the stream (or a
// demuxing error), after which the run has ended (endOfRun).
func (r *reader) next() (bool, error) {
	v := r.v
	err := r.fc.ReadFrame(r.pkt)
	if err != nil {
		if !errors.Is(err, astiav.ErrEof) {
			r.lastErr = err
		}
		return false, r.endOfRun(err)
	}
	if r.pkt.StreamIndex() != v.streamIndex {
		r.pkt.Unref()
		return false, nil
	}
	r.curDpos++
	if d := r.curDpos; r.drop && d < len(v.pkts) && (!r.sched.need[d] && v.pkts[d].nonref || r.sched.skip != nil && r.sched.skip[d]) {
		r.st.Skipped++ // no one asked for it and no picture it needs references it
		if !v.pkts[d].nonref {
			r.st.SkippedReferences++
		}
		r.dropped[d] = true
		r.pkt.Unref()
		return false, nil
	}
	return true, nil
}

// endOfRun drains the decoder at the segment's last packet or at the end of the stream; the targets
// still missing are then lost (fail may ask for a retry).
func (r *reader) endOfRun(_ error) error {
	if err := r.flush(); err != nil {
		return err
	}
	r.drained = true
	for r.ti < len(r.targets) && r.forceKey < 0 {
		r.fail(r.targets[r.ti])
	}
	return nil
}

// checkLost declares target t lost when its packet went in long ago and it never came out: "long ago"
// counts the packets sent after it, as the decoder's delay does, not those left out (nonref.go).
func (r *reader) checkLost(t int) {
	v := r.v
	if r.forceKey >= 0 || r.ti >= len(r.targets) || r.targets[r.ti] != t || v.counting {
		return
	}
	limit := v.frameDpos[t] + reorderSlack + r.dec.ThreadCount()
	if r.curDpos > limit && r.curDpos-r.droppedIn(v.frameDpos[t], r.curDpos) > limit {
		r.fail(t)
	}
}

// droppedIn counts the packets left out of the decoder at decode positions in (from, to].
func (r *reader) droppedIn(from, to int) int {
	n := 0
	for d := max(from+1, 0); d <= to && d < len(r.dropped); d++ {
		if r.dropped[d] {
			n++
		}
	}
	return n
}

// seekKey is the decode position of the keyframe to start from so that frame t decodes correctly: the
// last keyframe at or before t's packet in decode order whose pts is not after t's (so open-GOP leading
// pictures, which follow their keyframe in decode order but precede it on screen, start one GOP earlier).
func (v *Video) seekKey(t int) int {
	d := v.frameDpos[t]
	if v.counting {
		return 0
	}
	pts := v.idx.PTS[t]
	for ; d > 0; d-- {
		p := v.pkts[d]
		if p.key && p.pts != astiav.NoPtsValue && p.pts <= pts {
			return d
		}
	}
	return 0
}

// prevKey is the keyframe before k (decode order) usable for frame t, for a retry after a failed seek.
func (v *Video) prevKey(k, t int) int {
	pts := v.idx.PTS[t]
	for d := k - 1; d > 0; d-- {
		p := v.pkts[d]
		if p.key && p.pts != astiav.NoPtsValue && p.pts <= pts {
			return d
		}
	}
	return 0
}

// positionAt makes packet k the next one sent to a freshly opened decoder (r.pending holds it). A
// keyframe a few packets ahead is reached by reading on, leaving the packets between out of the
// decoder (no seek: the old rule, 8 + 2 × threads packets, 60 more on a GPU); otherwise the demuxer
// seeks, or re-opens and skips when the seek cannot be verified.
func (r *reader) positionAt(k int) error {
	v := r.v
	if !r.readOnTo(k) {
		r.pending = false
		r.pkt.Unref()
		ok := false
		if k > 0 && !v.noSeek {
			var err error
			if ok, err = r.seekTo(k); err != nil {
				return err
			}
		}
		if !ok {
			if err := r.rewindAndSkip(k); err != nil {
				return err
			}
		}
		r.curDpos, r.pending = k, true
	}
	r.fresh = false
	r.startK = k
	r.outCount = 0
	r.validPTS = math.MinInt64
	if k > 0 && !v.counting {
		r.validPTS = v.pkts[k].pts
	}
	return r.openDecoder()
}

// readOnTo reads up to packet k when it lies a few packets ahead of the demuxer, counting those in
// between as left out; false when k is behind or far ahead (or the read fails): the caller seeks.
func (r *reader) readOnTo(k int) bool {
	v := r.v
	th := r.threads
	if r.dec != nil {
		th = r.dec.ThreadCount()
	}
	limit := readOnLimit(th)
	if v.hw.Device != "" {
		limit += 60 // a hardware decoder restart creates a new device context
	}
	if r.fresh || r.curDpos < 0 || r.pending || k <= r.curDpos || k-r.curDpos-1 > limit {
		return false
	}
	for r.curDpos < k {
		if err := r.fc.ReadFrame(r.pkt); err != nil {
			return false
		}
		if r.pkt.StreamIndex() != v.streamIndex {
			r.pkt.Unref()
			continue
		}
		r.curDpos++
		if r.curDpos < k {
			r.st.Skipped++ // between two segments: nothing needs it
			if r.dropped != nil {
				r.dropped[r.curDpos] = true
			}
			r.pkt.Unref()
		}
	}
	r.pending = true
	return true
}

// seekTo seeks the demuxer to keyframe packet k and reads up to it. It returns false (and no error)
// when the seek lands after k or cannot be verified; the caller then rewinds and skips instead.
func (r *reader) seekTo(k int) (bool, error) {
	v := r.v
	p := v.pkts[k]
	ts := p.dts
	if ts == astiav.NoPtsValue || (p.pts != astiav.NoPtsValue && p.pts < ts) {
		ts = p.pts
	}
	if err := r.fc.SeekFrame(v.streamIndex, ts, astiav.NewSeekFlags(astiav.SeekFlagBackward)); err != nil {
		return false, nil
	}
	r.st.Seeks++
	for tries := 0; tries < 4096; tries++ {
		err := r.fc.ReadFrame(r.pkt)
		if err != nil {
			return false, nil
		}
		if r.pkt.StreamIndex() != v.streamIndex {
			r.pkt.Unref()
			continue
		}
		d, ok := v.identify(r.pkt)
		switch {
		case !ok:
			r.pkt.Unref()
			return false, nil
		case d < k:
			r.pkt.Unref()
		case d == k:
			return true, nil
		default: // landed after the keyframe
			r.pkt.Unref()
			return false, nil
		}
	}
	return false, nil
}

// identify maps a demuxed packet to its decode position from the scan: by byte position when unique,
// else by timestamps.
func (v *Video) identify(p *astiav.Packet) (int, bool) {
	if v.posDpos != nil && p.Pos() >= 0 {
		d, ok := v.posDpos[p.Pos()]
		return d, ok
	}
	pts, dts := p.Pts(), p.Dts()
	for d, q := range v.pkts {
		if q.pts == pts && q.dts == dts {
			return d, true
		}
	}
	return 0, false
}

// rewindAndSkip re-opens the demuxer at the start (unless it was just opened) and reads (without
// decoding) up to packet k.
func (r *reader) rewindAndSkip(k int) error {
	v := r.v
	if !r.fresh {
		fc, err := v.openDemuxer()
		if err != nil {
			return wrap(v.name, "read", err)
		}
		if r.ownFC {
			closeDemuxer(r.fc)
		} else { // v's own demuxer: the Video keeps owning its replacement
			closeDemuxer(v.fc)
			v.fc = fc
		}
		r.fc = fc
		r.st.Reopens++
	}
	r.fresh = false
	d := -1
	for {
		err := r.fc.ReadFrame(r.pkt)
		if err != nil {
			return wrap(v.name, "read", fmt.Errorf("%w: demuxing to packet %d: %w", ErrCorrupt, k, err))
		}
		if r.pkt.StreamIndex() != v.streamIndex {
			r.pkt.Unref()
			continue
		}
		d++
		if d == k {
			return nil
		}
		r.pkt.Unref()
	}
}

// openDecoder opens a fresh decoder for the current stream (go-astiav v0.16 has no
// avcodec_flush_buffers, so a new decoder is how state is reset after a seek).
func (r *reader) openDecoder() error {
	v := r.v
	if r.dec != nil {
		r.dec.Free()
		untrack(r.dec)
		r.dec = nil
	}
	r.drained = false
	threads := r.threads
	if r.singleThread {
		threads = 1
	}
	var hw func(*astiav.CodecContext, *astiav.Codec) error
	if v.hw.Device != "" {
		hw = r.setupHWDecoder
	}
	cc, err := v.openDecoder(r.stream(), threads, astiav.ThreadTypeFrame|astiav.ThreadTypeSlice, hw)
	if err != nil {
		return err
	}
	r.dec = cc
	r.errMark = ffmpeg.DecoderErrors()
	return nil
}

// openDecoder is the one place a decoder is opened (Read's readers and the sequential pass): FFmpeg's
// decoder for st's codec (with hw set, the one hwDecoder picks for the device, which hw then sets up
// before the open), st's parameters and time base, threads of the given types. The caller owns the
// tracked context and frees it (Free, untrack).
func (v *Video) openDecoder(st *astiav.Stream, threads int, types astiav.ThreadType, hw func(*astiav.CodecContext, *astiav.Codec) error) (*astiav.CodecContext, error) {
	cp := st.CodecParameters()
	codec := astiav.FindDecoder(cp.CodecID())
	if hw != nil {
		codec = hwDecoder(cp.CodecID(), v.hwType) // the decoder setupHW checked
	}
	if codec == nil {
		return nil, wrap(v.name, "decode", fmt.Errorf("%w: %s", ErrUnsupportedCodec, codecName(cp.CodecID())))
	}
	cc := astiav.AllocCodecContext(codec)
	if cc == nil {
		return nil, wrap(v.name, "decode", errors.New("cannot allocate a decoder"))
	}
	track(cc)
	fail := func(err error) (*astiav.CodecContext, error) {
		cc.Free()
		untrack(cc)
		return nil, err
	}
	if err := cp.ToCodecContext(cc); err != nil {
		return fail(wrap(v.name, "decode", err))
	}
	cc.SetThreadCount(threads)
	cc.SetThreadType(types)
	cc.SetTimeBase(st.TimeBase())
	if hw != nil {
		if err := hw(cc, codec); err != nil {
			return fail(err)
		}
	}
	if err := cc.Open(codec, nil); err != nil {
		return fail(wrap(v.name, "decode", fmt.Errorf("%w: opening the %s decoder: %w", ErrUnsupportedCodec, codec.Name(), err)))
	}
	return cc, nil
}

// setupHWDecoder gives cc a device context and a pixel-format callback choosing the device's format.
func (r *reader) setupHWDecoder(cc *astiav.CodecContext, codec *astiav.Codec) error {
	v := r.v
	hwfmt := hwPixFmt(codec, v.hwType)
	r.hwFmt = hwfmt
	hdc, err := astiav.CreateHardwareDeviceContext(v.hwType, "", nil)
	if err != nil {
		// The device worked at Open; losing it now is an error, not a silent CPU substitute.
		return wrap(v.name, "hwaccel", fmt.Errorf("%s device: %w", v.hw.Device, err))
	}
	cc.SetHardwareDeviceContext(hdc)
	cc.SetPixelFormatCallback(func(pfs []astiav.PixelFormat) astiav.PixelFormat {
		for _, pf := range pfs {
			if pf == hwfmt {
				return pf
			}
		}
		// The GPU declined this stream (profile/size it cannot take): FFmpeg lists the software
		// format last; decode on the CPU and say so in Stats.
		r.hwDeclined = true
		if len(pfs) == 0 {
			return astiav.PixelFormatNone
		}
		return pfs[len(pfs)-1]
	})
	return nil
}

// send feeds one packet (nil: end of stream) and drains the frames it releases.
func (r *reader) send(p *astiav.Packet) error {
	r.st.PacketsSent++
	for {
		err := r.dec.SendPacket(p)
		if errors.Is(err, astiav.ErrEagain) {
			if err := r.drain(); err != nil {
				return err
			}
			continue
		}
		if err != nil && !errors.Is(err, astiav.ErrEof) {
			r.lastErr = err // corrupt packet: its frame will be reported missing
		}
		return r.drain()
	}
}

func (r *reader) flush() error {
	if r.dec == nil || r.drained {
		return nil
	}
	r.st.PacketsSent-- // the flush is not a packet
	return r.send(nil)
}

func (r *reader) drain() error {
	for {
		err := r.dec.ReceiveFrame(r.frm)
		if errors.Is(err, astiav.ErrEagain) || errors.Is(err, astiav.ErrEof) {
			return nil
		}
		if err != nil {
			r.lastErr = err
			return nil
		}
		err = r.onFrame(r.frm)
		r.frm.Unref()
		if err != nil {
			return err
		}
	}
}

// onFrame identifies a decoded frame (by pts, or by output order in counting mode) and delivers it
// when it is the next target.
func (r *reader) onFrame(f *astiav.Frame) error {
	v := r.v
	r.st.Decoded++
	if r.forceKey >= 0 {
		return nil // a retry from an earlier keyframe is pending; this decoder's output is moot
	}
	if w, h := f.Width(), f.Height(); w*h > v.opts.MaxFrameArea {
		return wrap(v.name, "decode", fmt.Errorf("%w: decoded frame %dx%d > %d pixels", ErrTooLarge, w, h, v.opts.MaxFrameArea))
	}
	j, ok := r.frameIndex(f)
	if !ok {
		return nil
	}
	for r.ti < len(r.targets) && r.targets[r.ti] < j {
		// Frames come out in presentation order: a later one means the target was lost.
		if r.fail(r.targets[r.ti]); r.forceKey >= 0 {
			return nil
		}
	}
	if r.ti >= len(r.targets) || r.targets[r.ti] != j || j >= v.NumFrames() {
		return nil
	}
	damaged, deliver := r.checkDamage(f, j)
	if !deliver {
		return nil
	}
	return r.deliver(f, j, damaged)
}

// frameIndex is the index of a decoded frame: by output order since the start (counting mode) or by
// its pts; false for a frame that is no frame of the index (a leading picture of the keyframe the
// decoder started from, an unknown pts).
func (r *reader) frameIndex(f *astiav.Frame) (int, bool) {
	v := r.v
	if v.counting {
		j := r.startK + r.outCount // counting mode always starts at 0
		r.outCount++
		return j, true
	}
	pts := f.Pts()
	if pts == astiav.NoPtsValue || pts < r.validPTS {
		return 0, false
	}
	j, ok := v.ptsFrame[pts]
	return j, ok
}

// checkDamage decides what happens to target j: delivered (and whether damaged), refused as damaged,
// or decoded again (r.forceKey set) from an earlier keyframe or with one thread.
func (r *reader) checkDamage(f *astiav.Frame, j int) (damaged, deliver bool) {
	v := r.v
	damaged, cause := frameDamage(f)
	if damaged && r.drop && r.sched.skip != nil {
		// Reference pictures were left out (h26x/h264refs.go): decode again from the keyframe with every
		// reference picture before believing the damage, and keep doing so for the rest of the pass.
		r.drop = false
		r.forceKey = v.seekKey(j)
		return false, false
	}
	if damaged {
		// A frame reached through a seek may be damaged by the seek (a keyframe that is no clean
		// random access point): try once from the keyframe before, as for a lost frame.
		if r.startK > 0 && r.retried[j] == 0 && !v.counting {
			r.retried[j]++
			r.forceKey = v.prevKey(r.startK, j)
			return false, false
		}
		r.st.Damaged = append(r.st.Damaged, j)
		if r.res.cause == "" {
			r.res.cause = cause
		}
		if v.opts.OnDamaged != DamagedKeep {
			r.res.refused = append(r.res.refused, j)
			r.ti++
			return true, false
		}
		return true, true
	}
	if !r.singleThread && r.dec.ThreadCount() > 1 {
		// FFmpeg 5.1's frame threads drop decode_error_flags (the output frame is referenced before
		// concealment runs), but a frame's decoding thread has logged its errors by the time the frame
		// comes out. So a decoder error since the last check (from any decoder in the process: the
		// count is global) means this frame may be damaged: decode again from its keyframe with one
		// thread, which reports the flags exactly, and stay single-threaded for the rest of the pass.
		if n := ffmpeg.DecoderErrors(); n != r.errMark {
			r.errMark = n
			r.singleThread = true
			r.st.SingleThreadRedecodes++
			r.forceKey = v.seekKey(j)
			return false, false
		}
	}
	return false, true
}

// deliver converts target j to RGB and hands it to fn.
func (r *reader) deliver(f *astiav.Frame, j int, damaged bool) error {
	v := r.v
	src := f
	if v.hw.Device != "" && f.PixelFormat() == r.hwFmt {
		r.sw.Unref()
		if err := f.TransferHardwareData(r.sw); err != nil {
			return wrap(v.name, "hwaccel", fmt.Errorf("frame %d: transfer from the GPU: %w", j, err))
		}
		src = r.sw
	}
	img, err := r.conv.convert(src, r.stream().TimeBase())
	if err != nil {
		return wrap(v.name, "convert", fmt.Errorf("frame %d: %w", j, err))
	}
	r.st.Converted++
	r.ti++
	r.frameOut = Frame{Image: *img, Index: j, PTS: v.idx.PTS[j], Seconds: v.idx.Seconds[j], Key: v.idx.Key[j], Orientation: v.orient, Damaged: damaged}
	return r.fn(&r.frameOut)
}

// fail records target t as lost, unless it was reached through a seek: then it asks (twice at most)
// for a retry from an earlier point (a seek into a stream whose keyframes are not clean random access
// points) by setting r.forceKey.
func (r *reader) fail(t int) {
	if r.drop && !r.v.counting {
		// Before anything else, decode again from t's keyframe sending every packet, and keep doing so
		// for the rest of the pass: an H.264 stream without VUI reorder info makes FFmpeg learn its
		// reorder depth from the B-frames it sees, so one left out (nonref.go) could let a target come
		// out of order and be dropped. The pass then costs what it did without nonref.go.
		r.drop = false
		r.forceKey = r.v.seekKey(t)
		return
	}
	if r.startK > 0 && r.retried[t] < 2 && !r.v.counting {
		// First retry: the keyframe before (an open-GOP I-frame the decoder does not treat as a
		// recovery point). Second: the start of the stream.
		r.retried[t]++
		r.forceKey = 0
		if r.retried[t] == 1 {
			r.forceKey = r.v.prevKey(r.startK, t)
		}
		return
	}
	r.res.failed = append(r.res.failed, &FrameError{Index: t, PTS: r.v.idx.PTS[t], Err: r.lastErr})
	r.ti++
}

// frameDamage reads what the decoder flagged on a frame: AVFrame.decode_error_flags (set when error
// concealment ran, slices failed, references were missing, the bitstream was invalid) and the
// AV_FRAME_FLAG_CORRUPT bit. go-astiav v0.16 binds neither, so native/ffmpeg reads them.
func frameDamage(f *astiav.Frame) (bool, string) {
	d, fl := ffmpeg.FrameErrors(f)
	if d == 0 && fl&ffmpeg.FrameFlagCorrupt == 0 {
		return false, ""
	}
	var why []string
	for _, b := range []struct {
		bit  int
		name string
	}{
		{ffmpeg.DecodeErrorConcealmentActive, "concealment active"},
		{ffmpeg.DecodeErrorDecodeSlices, "slices failed to decode"},
		{ffmpeg.DecodeErrorMissingReference, "missing reference"},
		{ffmpeg.DecodeErrorInvalidBitstream, "invalid bitstream"},
	} {
		if d&b.bit != 0 {
			why = append(why, b.name)
		}
	}
	if fl&ffmpeg.FrameFlagCorrupt != 0 {
		why = append(why, "flagged corrupt")
	}
	if len(why) == 0 {
		why = append(why, fmt.Sprintf("decode_error_flags %#x", d))
	}
	return true, strings.Join(why, ", ")
}
