package decode

import (
	"runtime"
	"slices"
	"sort"
	"strings"
)

// A Read's schedule. The frames asked for are split into segments: runs of packets [key, end] in decode
// order that a fresh decoder decodes from the keyframe key, sending the reference pictures and the
// frames asked for, then drains. Segments need nothing from each other, so they can run on separate
// decoders at once; the frames still reach the caller in index order. The cost model (choose) picks
// how many decoders run at once and how many threads each gets. docs/decode.md, "Parallel segments".

// segment is one independent run of decoding.
type segment struct {
	key, end int   // decode positions: the start keyframe and the last packet the targets need
	targets  []int // frame indices, ascending
	send     int   // packets it sends when non-reference pictures are left out (its cost)
	lo, hi   int   // smallest and largest target
}

// schedule is what Read runs.
type schedule struct {
	segments []segment
	workers  int // decoders at once (1: one decoder takes the segments in turn)
	threads  int // threads per decoder (0: FFmpeg's automatic count)
	cores    int // cores taken from the pool
	// floor is the reference-chain minimum: the packets a decoder must be sent for these frames (from
	// each frame's start keyframe, the reference pictures and the frames themselves).
	floor int
	need  []bool // by decode position: the packet of a target
	drop  bool   // non-reference pictures nobody asked for are left out
	// skip marks, by decode position, the reference pictures left out too: those no target uses
	// (refModel.LeaveOut; nil when there are none).
	skip []bool
	why  string // the cost model's choice, for Stats.Plan
}

// Costs in the model, in packets of the stream's own decoding time (a decoder restart is a seek, a
// decoder open and, with frame threads, the threads' pipeline filling again).
const (
	restartOneThread = 0 // a seek and a fresh decoder cost less than one picture (docs/decode.md)
	demuxerOpenMs    = 4 // opening one more demuxer (plus decoding a picture to read stream info)
	frameThreadGain  = 0.7
	smallWork        = 30e6 // ns: below this a Read decodes on one thread (threads cost more to start)
	// parallelBuffer bounds the converted frames that wait (in bytes) because an earlier segment has
	// not been delivered yet.
	parallelBuffer = 64 << 20
	// decoderMemory bounds the decoders at once: each holds about 10 pictures of its size.
	decoderMemory = 1 << 30
)

// scheduleRead builds the schedule for the distinct ascending targets.
func (v *Video) scheduleRead(targets []int) *schedule {
	p, groups := v.scheduleGroups(targets)
	pool := v.opts.Cores
	if pool == nil {
		pool = DefaultCorePool()
	}
	want := pool.Size()
	if v.opts.MaxCores > 0 {
		want = min(want, v.opts.MaxCores)
	}
	if v.opts.Threads > 0 {
		want = 1 // the caller fixed the threads (tests, benchmarks): the Read counts as one core
	}
	if v.forceWorkers > 0 {
		p.cores = pool.takeExactly(v.forceWorkers) // tests: as if the pool had them
	} else {
		p.cores = pool.Take(want)
	}
	p.workers, p.threads, p.why = v.choose(groups, p.cores)
	v.cutSegments(p, groups)
	if p.workers > len(p.segments) {
		p.workers = len(p.segments)
		if p.workers < 2 { // the gaps were not worth a restart: one run, one decoder
			p.threads, p.why = v.autoThreads(p.cores), "one decoder: one segment"
		}
	}
	used := p.workers * max(p.threads, 1)
	if p.threads == 0 {
		used = p.cores
	}
	if used < p.cores {
		pool.Give(p.cores - used)
		p.cores = used
	}
	return p
}

// scheduleGroups is the part of a schedule the frames alone decide: the packets of the targets, whether
// non-reference pictures are left out, and the groups (each target's start keyframe to its packet,
// overlapping ones joined, in presentation order) with their sends and the floor.
func (v *Video) scheduleGroups(targets []int) (*schedule, []segment) {
	p := &schedule{need: make([]bool, len(v.pkts))}
	for _, t := range targets {
		p.need[v.frameDpos[t]] = true
	}
	p.drop = !v.counting && !v.opts.DecodeAll && v.opts.OnDamaged != DamagedKeep && v.canDrop()
	groups := v.overlapGroups(targets)
	for i := range groups {
		groups[i].send = v.sendCount(groups[i].key, groups[i].end, p.need)
		p.floor += groups[i].send
	}
	return p, inPresentationOrder(groups)
}

// cutSegments turns the groups into the segments decoders run with p.threads threads each: the gaps
// not worth a restart joined (mergeGaps), each segment's sends, and the reference pictures no target
// uses left out. It is the seek rule: where decoding restarts at a keyframe, and what it decodes.
func (v *Video) cutSegments(p *schedule, groups []segment) {
	p.segments = v.mergeGaps(groups, p.need, p.threads)
	for i := range p.segments {
		if v.counting {
			// Output order is not decode order: a target's picture may sit in a later packet than the
			// one its index names, so the run goes on until the targets are out, not to a packet.
			p.segments[i].end = len(v.pkts) - 1
		}
		p.segments[i].send = v.sendCount(p.segments[i].key, p.segments[i].end, p.need)
	}
	v.leaveOutReferences(p)
}

// ReadCost is what a Read of some frames decodes, from the index scan alone: the schedule Read runs,
// without decoding (and without the cores, which decide how many decoders share the work, not what
// they decode). It is what `plan --grid` prints as "decode".
type ReadCost struct {
	FramesToDecode int `json:"frames_to_decode"` // the distinct frames asked for
	// Seeks are the restarts at a keyframe past the decoder's position: the first segment's unless it
	// starts at the first packet, and every further one's (Read seeks the demuxer, or reads on to a
	// keyframe a few packets ahead). nil when the keyframes are unknown (ForwardCost).
	Seeks *int `json:"seeks"`
	// FramesDecoded are the pictures the decoder is sent, needed or not (Stats.PacketsSent); for a
	// stream whose frames are identified by output order, the most it is sent (the pass stops once its
	// frames are out).
	FramesDecoded int `json:"frames_decoded"`
}

// ReadCost is the cost of Read(indices) (which it validates the same way), as one decoder on the
// machine's cores would run it.
func (v *Video) ReadCost(indices []int) (ReadCost, error) {
	if v.closed {
		return ReadCost{}, wrap(v.name, "read", ErrClosed)
	}
	targets, err := v.distinctTargets(indices)
	if err != nil {
		return ReadCost{}, err
	}
	c := ReadCost{FramesToDecode: len(targets), Seeks: new(int)}
	if len(targets) == 0 {
		return c, nil
	}
	p, groups := v.scheduleGroups(targets)
	p.threads = v.opts.Threads
	v.cutSegments(p, groups)
	for i, s := range p.segments {
		c.FramesDecoded += s.send
		if i > 0 || s.key > 0 {
			*c.Seeks++
		}
	}
	return c, nil
}

// ForwardCost is the cost of decoding the sorted distinct frames in one pass from the first frame,
// when nothing is known of the keyframes (a frame count without a video, a loader's own numbering):
// every frame up to the last one, seeks unknown.
func ForwardCost(frames []int) ReadCost {
	c := ReadCost{FramesToDecode: len(frames)}
	if len(frames) > 0 {
		c.FramesDecoded = frames[len(frames)-1] + 1
	}
	return c
}

// leaveOutReferences marks the H.264 and HEVC reference pictures no target of a segment uses
// (refModel.LeaveOut), and takes them off the segments' sends and the floor. Not with hardware
// decoding (a device decoder's handling of frame_num gaps and missing references is not FFmpeg's
// software one) nor when nothing is dropped.
func (v *Video) leaveOutReferences(p *schedule) {
	if !p.drop || v.refs == nil || v.hw.Device != "" || v.counting {
		return
	}
	for i := range p.segments {
		s := &p.segments[i]
		for _, d := range v.refs.LeaveOut(s.key, s.end, p.need) {
			if p.skip == nil {
				p.skip = make([]bool, len(v.pkts))
			}
			p.skip[d] = true
			s.send--
			p.floor--
		}
	}
}

// autoThreads is the thread count of a single decoder on the cores taken: FFmpeg's own automatic
// count when they are the whole machine, else that many.
func (v *Video) autoThreads(cores int) int {
	if cores < runtime.NumCPU() {
		return cores
	}
	return 0
}

// release gives the schedule's cores back to the pool.
func (v *Video) release(p *schedule) {
	pool := v.opts.Cores
	if pool == nil {
		pool = DefaultCorePool()
	}
	pool.Give(p.cores)
}

// canDrop reports whether this stream's non-reference pictures are known (H.264, HEVC with hvcC).
func (v *Video) canDrop() bool {
	for _, p := range v.pkts {
		if p.nonref {
			return true
		}
	}
	return false
}

// sendCount is the number of packets in [a, b] a decoder is sent: all but the non-reference pictures
// nobody asked for (when the stream is identified by output order, all: refCum counts them all).
func (v *Video) sendCount(a, b int, need []bool) int {
	if b < a {
		return 0
	}
	n := int(v.refCum[b+1] - v.refCum[a])
	if v.counting {
		return n
	}
	for d := a; d <= b; d++ { // the targets among the non-reference pictures
		if need[d] && v.pkts[d].nonref {
			n++
		}
	}
	return n
}

// overlapGroups merges the targets' decode ranges [start keyframe, own packet] that overlap: each
// group is the least a decoder decodes for its targets, in decode order.
func (v *Video) overlapGroups(targets []int) []segment {
	spans := make([]segment, len(targets))
	for i, t := range targets {
		spans[i] = segment{key: v.seekKey(t), end: v.frameDpos[t], targets: []int{t}, lo: t, hi: t}
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].key < spans[j].key })
	var out []segment
	for _, s := range spans {
		if n := len(out); n > 0 && s.key <= out[n-1].end {
			out[n-1] = joinSegments(out[n-1], s)
			continue
		}
		out = append(out, s)
	}
	return out
}

func joinSegments(a, b segment) segment {
	a.key, a.end = min(a.key, b.key), max(a.end, b.end)
	a.targets = append(a.targets, b.targets...)
	slices.Sort(a.targets)
	a.lo, a.hi = min(a.lo, b.lo), max(a.hi, b.hi)
	return a
}

// inPresentationOrder merges neighbouring groups whose frames interleave on screen (a stream whose
// pts do not follow its GOPs), so that delivering the groups in turn delivers frames in index order.
func inPresentationOrder(groups []segment) []segment {
	var out []segment
	for _, g := range groups {
		for len(out) > 0 && out[len(out)-1].hi > g.lo {
			g = joinSegments(out[len(out)-1], g)
			out = out[:len(out)-1]
		}
		out = append(out, g)
	}
	return out
}

// mergeGaps joins neighbouring groups when decoding straight through the reference pictures between
// them costs less than a restart: a seek and a fresh decoder cost less than a picture (a decoder with
// frame threads also refills its pipeline, but that idles cores for a moment, it does not decode
// pictures nobody needs); on a GPU 60 pictures (each decoder creates a device context). A keyframe a
// few packets ahead is reached without a seek (reader.readOnTo). With Options.DecodeAll or OnDamaged
// keep every packet up to a frame is decoded as before segments existed: the gaps the reader would
// read through are decoded, not left out.
func (v *Video) mergeGaps(groups []segment, need []bool, threads int) []segment {
	if len(groups) == 0 {
		return nil
	}
	sendAll := v.opts.DecodeAll || v.opts.OnDamaged == DamagedKeep
	limit := restartOneThread
	if sendAll {
		limit = readOnLimit(threads)
	}
	if v.hw.Device != "" {
		limit += 60
	}
	out := []segment{groups[0]}
	for _, g := range groups[1:] {
		last := &out[len(out)-1]
		gap := v.sendCount(last.end+1, g.key-1, need)
		if sendAll {
			gap = g.key - last.end - 1
		}
		if v.counting || gap <= limit {
			*last = joinSegments(*last, g)
			continue
		}
		out = append(out, g)
	}
	return out
}

// readOnLimit is how many packets a reader reads on (without decoding them) to a keyframe ahead instead
// of seeking: 8 + 2 × threads (threads 0: FFmpeg's automatic count).
func readOnLimit(threads int) int {
	if threads <= 0 {
		threads = runtime.NumCPU() + 1
	}
	return 8 + 2*threads
}

// choose is the cost model: how many decoders run at once and with how many threads each, given the
// groups (before gap merging) and the cores taken. Times are estimated in nanoseconds from the
// packets each decoder is sent and a per-pixel decoding cost per codec:
//   - one decoder with frame threads: Σ sends × t / gain(cores) + a pipeline refill per restart;
//   - W decoders with cores/W threads each, taking the segments in turn: the longest queue (greedy,
//     in order) × t / gain(threads) + opening the extra demuxers.
//
// gain(n) = 1 + 0.7 (n − 1) (measured: 1080p H.264, 246 → 411 frames/s from 1 to FFmpeg's 3 threads on
// 2 cores). Segments win when they are estimated faster: they also spend less CPU (frame threads cost
// about 7 % more CPU for the same pictures, bench/peers_decode_test.go) and never fall back to one
// thread after a logged decoder error (reader.checkDamage). One decoder with one thread
// when the whole read is estimated under 30 ms. Not eligible for segments (one decoder): Options.Threads
// set, streams identified by output order (always decoded from the start), hardware decoding (a device
// context per decoder), OnDamaged keep (concealment depends on what was decoded before), a single group
// or a single core.
func (v *Video) choose(groups []segment, cores int) (workers, threads int, why string) {
	if v.opts.Threads > 0 {
		return 1, v.opts.Threads, "one decoder: Options.Threads"
	}
	t := v.nsPerPacket()
	total, sends := 0, make([]int, len(groups))
	for i, g := range groups {
		sends[i] = g.send
		total += g.send
	}
	auto := v.autoThreads(cores)
	eligible := !v.counting && v.hw.Device == "" && v.opts.OnDamaged != DamagedKeep && len(groups) > 1
	switch {
	case v.forceWorkers > 1 && eligible:
		return min(v.forceWorkers, len(groups)), 1, "segments (forced by a test)"
	case float64(total)*t < smallWork:
		return 1, 1, "one decoder, one thread: too little to decode for more"
	case v.counting:
		return 1, auto, "one decoder: frames identified by output order"
	case v.hw.Device != "":
		return 1, auto, "one decoder: hardware decoding"
	case v.opts.OnDamaged == DamagedKeep:
		return 1, auto, "one decoder: OnDamaged keep"
	case len(groups) < 2:
		return 1, auto, "one decoder: one segment"
	case cores < 2:
		return 1, 1, "one decoder: one core"
	}
	gain := func(n int) float64 { return 1 + frameThreadGain*float64(n-1) }
	one := float64(total)*t/gain(cores) + float64(len(groups)-1)*float64(cores-1)*t
	best, bestW := one, 1
	maxW := v.maxDecoders(groups)
	for w := 2; w <= min(cores, len(groups), maxW); w++ {
		th := cores / w
		est := float64(makespan(sends, w))*t/gain(th) + float64(demuxerOpenMs)*1e6 + t
		if est < best {
			best, bestW = est, w
		}
	}
	if bestW == 1 || best >= one {
		return 1, auto, "one decoder: segments would not pay"
	}
	return bestW, cores / bestW, "segments"
}

// maxDecoders caps the decoders at once by memory: each holds about 10 pictures of its size (at most
// decoderMemory in all), and while one segment is delivered each of the others may wait with all of its
// frames converted (at most parallelBuffer in all, or decoders would stall on it).
func (v *Video) maxDecoders(groups []segment) int {
	most := 0
	for _, g := range groups {
		most = max(most, len(g.targets))
	}
	frame := max(1, 3*v.info.OutWidth*v.info.OutHeight)
	byBuffer := 1 + parallelBuffer/max(1, most*frame)
	byDecoders := decoderMemory / max(1, 15*v.info.Width*v.info.Height)
	return max(1, min(byBuffer, byDecoders))
}

// makespan is the largest total a worker gets when w workers take the jobs in order, each the next
// one as soon as it is free.
func makespan(jobs []int, w int) int {
	free := make([]int, w)
	for _, j := range jobs {
		k := 0
		for i := range free {
			if free[i] < free[k] {
				k = i
			}
		}
		free[k] += j
	}
	return slices.Max(free)
}

// nsPerPacket estimates one picture's decoding time on one core from its size and codec (measured
// on x86-64 with FFmpeg 5.1, one thread, to within a factor of two: the model compares plans, it does
// not predict times).
func (v *Video) nsPerPacket() float64 {
	px := float64(max(v.info.Width*v.info.Height, 1))
	perPx := 1.5 // H.264, VP8 and the rest
	switch v.info.Codec {
	case "hevc":
		perPx = 2.5
	case "vp9":
		perPx = 2.0
	case "av1":
		perPx = 3.0
	case "mpeg4", "mpeg2video", "mpeg1video", "mjpeg":
		perPx = 0.8
	}
	if pf := v.info.PixFmt; strings.Contains(pf, "10") || strings.Contains(pf, "12") {
		perPx *= 1.5
	}
	return px * perPx
}
