package decode

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/asticode/go-astiav"
	"github.com/framesweep/framesweep/native/ffmpeg"
	"github.com/framesweep/framesweep/rgb"
)

// Frame is one decoded frame in RGB24, borrowed: valid only during the Read callback.
type Frame struct {
	rgb.Image
	Index       int
	PTS         int64 // stream time base (Index().TimeBase)
	Seconds     float64
	Key         bool
	Orientation Orientation
	// Damaged: the decoder concealed corrupt data in this frame (delivered only with OnDamaged keep).
	Damaged bool
}

// Stats report what one Read did.
type Stats struct {
	Requested int `json:"requested"` // indices passed in
	Distinct  int `json:"distinct"`  // distinct indices
	Decoded   int `json:"decoded"`   // frames output by the decoder (requested or not)
	Converted int `json:"converted"` // frames converted to RGB (= delivered)
	Failed    int `json:"failed"`    // requested frames the decoder did not produce
	// Damaged lists the requested frames the decoder concealed (ascending), whatever OnDamaged says;
	// with "fail" they were refused, with "keep" delivered with Frame.Damaged set.
	Damaged     []int  `json:"damaged"`
	OnDamaged   string `json:"on_damaged"`   // the policy in force: "fail" or "keep"
	Seeks       int    `json:"seeks"`        // demuxer seeks
	Reopens     int    `json:"reopens"`      // demuxer re-opens (rewinds to the start, seek fallbacks)
	PacketsSent int    `json:"packets_sent"` // packets fed to the decoder
	// Skipped: packets of non-reference pictures nobody asked for, left out of the decoder
	// (Options.DecodeAll sends them too).
	Skipped int `json:"packets_skipped"`
	// SingleThreadRedecodes: times the pass restarted from a keyframe with one decoder thread because
	// a frame-threaded decoder logged an error (its frames' damage flags are exact only then).
	SingleThreadRedecodes int    `json:"single_thread_redecodes,omitempty"`
	HWAccel               string `json:"hwaccel"`
	HWFallback            string `json:"hwaccel_fallback,omitempty"`
}

// reorderSlack bounds how many packets past a frame's own packet we feed before declaring that frame
// lost: H.264/HEVC reorder at most 16 pictures; frame threads add their own delay on top.
const reorderSlack = 20

// Read decodes the frames at indices (any order, duplicates allowed) in one forward pass and calls fn
// once per distinct index, in ascending order. All indices are validated first: one past the end is a
// *RangeError and nothing is decoded. A frame the decoder does not produce is reported as a
// *FrameError (joined into the returned error; the other frames are still delivered). An error
// returned by fn stops the pass and is returned as is.
func (v *Video) Read(indices []int, fn func(f *Frame) error) (Stats, error) {
	st := Stats{Requested: len(indices), HWAccel: "none", HWFallback: v.hw.Fallback, Damaged: []int{}, OnDamaged: string(v.opts.OnDamaged)}
	if v.hw.Device != "" {
		st.HWAccel = string(v.hw.Device)
	}
	if v.closed {
		return st, wrap(v.path, "read", ErrClosed)
	}
	n := v.NumFrames()
	for _, i := range indices {
		if i < 0 || i >= n {
			return st, wrap(v.path, "read", &RangeError{Index: i, NumFrames: n})
		}
	}
	targets := append([]int(nil), indices...)
	sort.Ints(targets)
	k := 0
	for i, t := range targets {
		if i == 0 || t != targets[k-1] {
			targets[k] = t
			k++
		}
	}
	targets = targets[:k]
	st.Distinct = len(targets)
	if len(targets) == 0 {
		return st, nil
	}
	r := &reader{v: v, st: &st, fn: fn, targets: targets, retried: map[int]int{}}
	err := r.run()
	r.close()
	if r.hwDeclined {
		st.HWFallback = fmt.Sprintf("%s: the decoder offered no %s format for this stream; decoded on the CPU", v.hw.Device, v.hw.Device)
	}
	if err != nil {
		return st, err
	}
	st.Failed = len(r.failed)
	return st, v.readError(r.failed, r.refused, r.damageCause)
}

// readError is what a Read that ran to its end returns: nil, the frames not produced (*FramesError),
// the frames refused as damaged (*DamagedError), or both in one line ("…; …"), errors.Is/As seeing each.
// (errors.Join would put them on two lines.)
func (v *Video) readError(failed []*FrameError, refused []int, cause string) error {
	var fe, de error
	if len(failed) > 0 {
		fe = &FramesError{Frames: failed}
	}
	if len(refused) > 0 {
		de = &DamagedError{Frames: refused, Cause: cause}
	}
	switch {
	case fe != nil && de != nil:
		return wrap(v.path, "decode", fmt.Errorf("%w; %w", fe, de))
	case fe != nil:
		return wrap(v.path, "decode", fe)
	case de != nil:
		return wrap(v.path, "decode", de)
	}
	return nil
}

// reader is the state of one decode-once pass.
type reader struct {
	v       *Video
	st      *Stats
	fn      func(*Frame) error
	targets []int
	ti      int // next unresolved target

	pkt      *astiav.Packet
	frm, sw  *astiav.Frame
	dec      *astiav.CodecContext
	conv     *converter
	pending  bool  // pkt holds the packet at curDpos, not yet sent
	curDpos  int   // decode position of the last packet read; -1: not positioned
	startK   int   // dpos the decoder started from
	validPTS int64 // frames with a smaller pts are leading pictures of startK: not trustworthy
	outCount int   // frames output since startK (counting mode)
	lastErr  error // last decoder error, the cause of lost frames
	failed   []*FrameError
	refused  []int // damaged targets refused (OnDamaged fail)
	// damageCause describes the first damaged target, for DamagedError.
	damageCause string
	retried     map[int]int
	forceKey    int // ≥ 0: reposition at this keyframe before going on (a retry)
	// hwDeclined: the decoder's format negotiation offered no hardware format, frames came from the CPU.
	hwDeclined bool
	hwFmt      astiav.PixelFormat // the decoder's hardware frame format (set when v.hw.Device != "")
	// errMark is ffmpeg.DecoderErrors() when last checked; singleThread: a decoder error was logged
	// while frame threads decoded, so the pass goes on with one thread, whose frames carry exact flags.
	errMark      int64
	singleThread bool
	frameOut     Frame
	// need marks the packets (by decode position) of this Read's targets; with disposable set,
	// unneeded non-reference pictures are dropped before the decoder (nonref.go).
	need       []bool
	dropped    []bool // by decode position: the packet was left out (the loss check counts only those sent)
	disposable func([]byte) bool
}

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
}

func (r *reader) run() error {
	v := r.v
	r.pkt = astiav.AllocPacket()
	r.frm = astiav.AllocFrame()
	r.sw = astiav.AllocFrame()
	track(r.pkt)
	track(r.frm)
	track(r.sw)
	filter := ""
	if v.orient.Applied {
		filter = v.orient.Filter()
	}
	r.conv = newConverter(filter)
	if v.hw.Device != "" || v.explicitColour {
		cp := v.stream().CodecParameters()
		r.conv.scaleOpts = colourScaleOpts(cp.ColorSpace(), cp.ColorRange())
	}
	r.curDpos = -1
	r.forceKey = -1
	r.disposable = nil
	if cp := v.stream().CodecParameters(); !v.counting && !v.opts.DecodeAll && v.opts.OnDamaged != DamagedKeep {
		r.disposable = disposableFunc(cp.CodecID(), cp.ExtraData())
	}
	if r.disposable != nil {
		r.need = make([]bool, len(v.pkts))
		r.dropped = make([]bool, len(v.pkts))
		for _, t := range r.targets {
			if d := v.frameDpos[t]; d >= 0 && d < len(r.need) {
				r.need[d] = true
			}
		}
	}
	for r.ti < len(r.targets) {
		t := r.targets[r.ti]
		if k, ok := r.needPosition(t, r.forceKey); ok {
			r.forceKey = -1
			if err := r.positionAt(k); err != nil {
				return err
			}
		}
		if !r.pending {
			err := v.fc.ReadFrame(r.pkt)
			if errors.Is(err, astiav.ErrEof) {
				if err := r.flush(); err != nil {
					return err
				}
				r.failPendingAtEOF()
				continue
			}
			if err != nil {
				r.lastErr = err
				if err := r.flush(); err != nil {
					return err
				}
				r.failPendingAtEOF()
				continue
			}
			if r.pkt.StreamIndex() != v.streamIndex {
				r.pkt.Unref()
				continue
			}
			r.curDpos++
			if r.disposable != nil && r.curDpos < len(r.need) && !r.need[r.curDpos] && r.disposable(r.pkt.Data()) {
				r.st.Skipped++ // no one asked for it and no picture references it
				r.dropped[r.curDpos] = true
				r.pkt.Unref()
				continue
			}
		}
		r.pending = false
		if err := r.send(r.pkt); err != nil {
			r.pkt.Unref()
			return err
		}
		r.pkt.Unref()
		// A target whose packet went in long ago and never came out is lost: "long ago" counts the
		// packets sent after it, as the decoder's delay does, not those left out (nonref.go).
		if r.forceKey < 0 && r.ti < len(r.targets) && r.targets[r.ti] == t && !v.counting &&
			r.curDpos > v.frameDpos[t]+reorderSlack+r.dec.ThreadCount() &&
			r.curDpos-r.droppedIn(v.frameDpos[t], r.curDpos) > v.frameDpos[t]+reorderSlack+r.dec.ThreadCount() {
			r.fail(t)
		}
	}
	return nil
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

// needPosition decides whether to (re)position the demuxer and decoder before decoding toward t, and
// at which packet. Seeking pays only when a keyframe lies ahead of the current position and skipping
// to it saves more decoding than the decoder restart costs.
func (r *reader) needPosition(t, forceKey int) (int, bool) {
	if forceKey >= 0 {
		return forceKey, true
	}
	if r.curDpos < 0 {
		return r.v.seekKey(t), true
	}
	if r.v.counting {
		return 0, false
	}
	k := r.v.seekKey(t)
	gap := k - (r.curDpos + 1)
	minGap := 8 + 2*r.dec.ThreadCount()
	if r.v.hw.Device != "" {
		minGap += 60 // a hardware decoder restart creates a new device context
	}
	return k, gap > minGap
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

// positionAt makes packet k the next one sent to a freshly opened decoder (r.pending holds it).
func (r *reader) positionAt(k int) error {
	v := r.v
	r.pending = false
	r.pkt.Unref()
	if k > 0 && !v.noSeek {
		ok, err := r.seekTo(k)
		if err != nil {
			return err
		}
		if !ok {
			if err := r.rewindAndSkip(k); err != nil {
				return err
			}
		}
	} else if err := r.rewindAndSkip(k); err != nil {
		return err
	}
	r.curDpos = k
	r.pending = true
	r.startK = k
	r.outCount = 0
	r.validPTS = math.MinInt64
	if k > 0 && !v.counting {
		r.validPTS = v.pkts[k].pts
	}
	return r.openDecoder()
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
	if err := v.fc.SeekFrame(v.streamIndex, ts, astiav.NewSeekFlags(astiav.SeekFlagBackward)); err != nil {
		return false, nil
	}
	r.st.Seeks++
	for tries := 0; tries < 4096; tries++ {
		err := v.fc.ReadFrame(r.pkt)
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

// rewindAndSkip re-opens the demuxer at the start and reads (without decoding) up to packet k.
func (r *reader) rewindAndSkip(k int) error {
	v := r.v
	if err := v.openInput(); err != nil {
		return wrap(v.path, "read", err)
	}
	r.st.Reopens++
	d := -1
	for {
		err := v.fc.ReadFrame(r.pkt)
		if err != nil {
			return wrap(v.path, "read", fmt.Errorf("%w: demuxing to packet %d: %w", ErrCorrupt, k, err))
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
	cp := v.stream().CodecParameters()
	codec := astiav.FindDecoder(cp.CodecID())
	if v.hw.Device != "" {
		codec = hwDecoder(cp.CodecID(), v.hwType) // the decoder setupHW checked
	}
	if codec == nil {
		return wrap(v.path, "decode", fmt.Errorf("%w: %s", ErrUnsupportedCodec, codecName(cp.CodecID())))
	}
	cc := astiav.AllocCodecContext(codec)
	if cc == nil {
		return wrap(v.path, "decode", errors.New("cannot allocate a decoder"))
	}
	track(cc)
	free := func() { cc.Free(); untrack(cc) }
	if err := cp.ToCodecContext(cc); err != nil {
		free()
		return wrap(v.path, "decode", err)
	}
	threads := v.opts.Threads
	if r.singleThread {
		threads = 1
	}
	cc.SetThreadCount(threads)
	cc.SetThreadType(astiav.ThreadTypeFrame | astiav.ThreadTypeSlice)
	cc.SetTimeBase(v.stream().TimeBase())
	if v.hw.Device != "" {
		hwfmt := hwPixFmt(codec, v.hwType)
		r.hwFmt = hwfmt
		hdc, err := astiav.CreateHardwareDeviceContext(v.hwType, "", nil)
		if err != nil {
			// The device worked at Open; losing it now is an error, not a silent CPU substitute.
			free()
			return wrap(v.path, "hwaccel", fmt.Errorf("%s device: %w", v.hw.Device, err))
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
	}
	if err := cc.Open(codec, nil); err != nil {
		free()
		return wrap(v.path, "decode", fmt.Errorf("%w: opening the %s decoder: %w", ErrUnsupportedCodec, codec.Name(), err))
	}
	r.dec = cc
	r.errMark = ffmpeg.DecoderErrors()
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
	if r.dec == nil {
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
		return wrap(v.path, "decode", fmt.Errorf("%w: decoded frame %dx%d > %d pixels", ErrTooLarge, w, h, v.opts.MaxFrameArea))
	}
	var j int
	if v.counting {
		j = r.startK + r.outCount // counting mode always starts at 0
		r.outCount++
	} else {
		pts := f.Pts()
		if pts == astiav.NoPtsValue || pts < r.validPTS {
			return nil
		}
		var ok bool
		if j, ok = v.ptsFrame[pts]; !ok {
			return nil
		}
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
	damaged, cause := frameDamage(f)
	if damaged {
		// A frame reached through a seek may be damaged by the seek (a keyframe that is no clean
		// random access point): try once from the keyframe before, as for a lost frame.
		if r.startK > 0 && r.retried[j] == 0 && !v.counting {
			r.retried[j]++
			r.forceKey = v.prevKey(r.startK, j)
			return nil
		}
		r.st.Damaged = append(r.st.Damaged, j)
		if r.damageCause == "" {
			r.damageCause = cause
		}
		if v.opts.OnDamaged != DamagedKeep {
			r.refused = append(r.refused, j)
			r.ti++
			return nil
		}
	}
	if !damaged && !r.singleThread && r.dec.ThreadCount() > 1 {
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
			return nil
		}
	}
	src := f
	if v.hw.Device != "" && f.PixelFormat() == r.hwFmt {
		r.sw.Unref()
		if err := f.TransferHardwareData(r.sw); err != nil {
			return wrap(v.path, "hwaccel", fmt.Errorf("frame %d: transfer from the GPU: %w", j, err))
		}
		src = r.sw
	}
	img, err := r.conv.convert(src, v.stream().TimeBase())
	if err != nil {
		return wrap(v.path, "convert", fmt.Errorf("frame %d: %w", j, err))
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
	if r.disposable != nil && !r.v.counting {
		// Before anything else, decode again from t's keyframe sending every packet, and keep doing so
		// for the rest of the pass: an H.264 stream without VUI reorder info makes FFmpeg learn its
		// reorder depth from the B-frames it sees, so one left out (nonref.go) could let a target come
		// out of order and be dropped. The pass then costs what it did without nonref.go.
		r.disposable = nil
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
	r.failed = append(r.failed, &FrameError{Index: t, PTS: r.v.idx.PTS[t], Err: r.lastErr})
	r.ti++
}

// failPendingAtEOF resolves the targets left when the stream ended.
func (r *reader) failPendingAtEOF() {
	for r.ti < len(r.targets) && r.forceKey < 0 {
		r.fail(r.targets[r.ti])
	}
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
