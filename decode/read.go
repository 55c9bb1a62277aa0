package decode

import (
	"fmt"
	"sort"

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
	// Skipped: packets read but left out of the decoder: non-reference pictures nobody asked for
	// (Options.DecodeAll sends them too), and the pictures between two segments (nothing after them
	// needs them: the next segment starts a fresh decoder at its keyframe).
	Skipped int `json:"packets_skipped"`
	// SkippedReferences: of Skipped, H.264 reference pictures that none of the frames asked for uses,
	// directly or through other pictures (h26x/h264refs.go).
	SkippedReferences int `json:"references_skipped,omitempty"`
	// SingleThreadRedecodes: times the pass restarted from a keyframe with one decoder thread because
	// a frame-threaded decoder logged an error (its frames' damage flags are exact only then).
	SingleThreadRedecodes int    `json:"single_thread_redecodes,omitempty"`
	HWAccel               string `json:"hwaccel"`
	HWFallback            string `json:"hwaccel_fallback,omitempty"`
	// MinPackets is the reference-chain floor: the packets any decoder must be sent for these frames
	// (from each one's start keyframe, the reference pictures and the frames themselves; every packet
	// when frames are identified by output order). PacketsSent ÷ MinPackets is the pass's overhead.
	MinPackets int `json:"packets_min"`
	// The schedule (docs/decode.md "Parallel segments"): Segments independent runs of decoding, Decoders
	// of them at once with Threads threads each (0: FFmpeg's automatic count), on Cores cores taken
	// from the pool; Plan says why.
	Segments int    `json:"segments"`
	Decoders int    `json:"decoders"`
	Threads  int    `json:"threads"`
	Cores    int    `json:"cores"`
	Plan     string `json:"plan"`
}

// Read decodes the frames at indices (any order, duplicates allowed) and calls fn once per distinct
// index, in ascending order, one call at a time, from the calling goroutine. All indices are validated
// first: one past the end is a *RangeError and nothing is decoded. A frame the decoder does not
// produce is reported as a *FrameError (joined into the returned error; the other frames are still
// delivered). An error returned by fn stops the pass and is returned as is.
//
// The frames are split into segments that start at keyframes (schedule.go); the segments are decoded by
// one decoder in turn or, when the cost model says it pays, by several at once (parallel.go).
// Either way every frame is the one a single forward pass gives, byte for byte.
func (v *Video) Read(indices []int, fn func(f *Frame) error) (Stats, error) {
	st := Stats{Requested: len(indices), HWAccel: "none", HWFallback: v.hw.Fallback, Damaged: []int{}, OnDamaged: string(v.opts.OnDamaged)}
	if v.hw.Device != "" {
		st.HWAccel = string(v.hw.Device)
	}
	if v.closed {
		return st, wrap(v.name, "read", ErrClosed)
	}
	targets, err := v.distinctTargets(indices)
	if err != nil {
		return st, err
	}
	st.Distinct = len(targets)
	if len(targets) == 0 {
		return st, nil
	}
	p := v.scheduleRead(targets)
	defer v.release(p)
	st.MinPackets, st.Segments, st.Decoders, st.Threads, st.Cores, st.Plan = p.floor, len(p.segments), p.workers, p.threads, p.cores, p.why
	results := make([]segResult, len(p.segments))
	var hwDeclined bool
	if p.workers > 1 {
		err = v.readParallel(p, results, fn, &st)
	} else {
		err = v.readSequential(p, results, fn, &st, &hwDeclined)
	}
	if hwDeclined {
		st.HWFallback = fmt.Sprintf("%s: the decoder offered no %s format for this stream; decoded on the CPU", v.hw.Device, v.hw.Device)
	}
	sort.Ints(st.Damaged)
	if err != nil {
		return st, err
	}
	var failed []*FrameError
	var refused []int
	cause := ""
	for _, r := range results {
		failed = append(failed, r.failed...)
		refused = append(refused, r.refused...)
		if cause == "" {
			cause = r.cause
		}
	}
	st.Failed = len(failed)
	return st, v.readError(failed, refused, cause)
}

// distinctTargets validates indices and returns them sorted without duplicates.
func (v *Video) distinctTargets(indices []int) ([]int, error) {
	n := v.NumFrames()
	for _, i := range indices {
		if i < 0 || i >= n {
			return nil, wrap(v.name, "read", &RangeError{Index: i, NumFrames: n})
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
	return targets[:k], nil
}

// readSequential runs the segments in turn on one decoder (v's own demuxer), delivering to fn directly.
func (v *Video) readSequential(p *schedule, results []segResult, fn func(*Frame) error, st *Stats, hwDeclined *bool) error {
	r := v.newReader(p, fn)
	defer r.close()
	_ = r.useDemuxer(false) // borrowing v's demuxer cannot fail
	var err error
	for i := range p.segments {
		if err = r.runSegment(&p.segments[i], &results[i]); err != nil {
			break
		}
	}
	st.add(&r.st)
	*hwDeclined = r.hwDeclined
	return err
}

// add adds a reader's counts to the Read's.
func (st *Stats) add(r *Stats) {
	st.Decoded += r.Decoded
	st.Converted += r.Converted
	st.Seeks += r.Seeks
	st.Reopens += r.Reopens
	st.PacketsSent += r.PacketsSent
	st.Skipped += r.Skipped
	st.SkippedReferences += r.SkippedReferences
	st.SingleThreadRedecodes += r.SingleThreadRedecodes
	st.Damaged = append(st.Damaged, r.Damaged...)
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
		return wrap(v.name, "decode", fmt.Errorf("%w; %w", fe, de))
	case fe != nil:
		return wrap(v.name, "decode", fe)
	case de != nil:
		return wrap(v.name, "decode", de)
	}
	return nil
}
