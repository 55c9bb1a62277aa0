package decode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/asticode/go-astiav"
	"github.com/framesweep/framesweep/decode/internal/h26x"
	"github.com/framesweep/framesweep/native/ffmpeg"
)

// Rational is a time base or frame rate (no C type crosses the package boundary).
type Rational struct {
	Num int `json:"num"`
	Den int `json:"den"`
}

// Float64 returns Num/Den (0 when Den is 0).
func (r Rational) Float64() float64 {
	if r.Den == 0 {
		return 0
	}
	return float64(r.Num) / float64(r.Den)
}

// Index is the frame index built by the demux scan, in presentation order: entry i describes frame i.
type Index struct {
	TimeBase Rational  // of PTS
	PTS      []int64   // stream time base
	Seconds  []float64 // PTS × TimeBase
	Key      []bool    // the frame's packet is a keyframe (random access point)
	// Cut lists, ascending, the frames whose packet the file cuts short (the demuxer delivered it
	// partial and flagged it corrupt: a truncated file's last packet). Decoding them fails or
	// conceals; a plan that does not decode can check them (load.Run's PlanOnly decodes them).
	Cut []int
}

// packetInfo is one packet of the primary video stream, in decode (file) order.
type packetInfo struct {
	pts, dts, pos int64
	key, discard  bool
	cut           bool // delivered partial: the file ends inside it (AV_PKT_FLAG_CORRUPT)
	rasl          bool // HEVC random access skipped leading picture
	nonref        bool // a picture no other picture references (H.264/HEVC, nonref.go)
	frames        int  // pictures the decoder outputs for it (0: discarded or hidden)
}

// Video is an opened video file with its frame index. It owns all FFmpeg state; Close releases it.
type Video struct {
	path string
	name string // what errors call it (Options.Name, else path)
	opts Options

	fc           *astiav.FormatContext
	streamIndex  int
	streamBy     string // "best" (FFmpeg's best video stream) or "requested" (Options.Stream)
	videoStreams []int  // indices of every video stream
	format       string // the demuxer FFmpeg chose ("" when the probe said nothing)

	pkts      []packetInfo
	idx       Index
	frameDpos []int // decode position (index into pkts) of each frame's packet
	ptsFrame  map[int64]int
	posDpos   map[int64]int
	// refs is the reference structure of an H.264 or HEVC stream (h26x.H264Refs, h26x.HEVCRefs); nil
	// for other codecs and for streams the model does not cover.
	refs refModel
	// refCum[d] counts the packets before decode position d that a decoder must be sent whatever is
	// asked (all of them, but the non-reference pictures when they can be left out): schedule.go's costs.
	refCum   []int32
	counting bool // timestamps unusable: frames are identified by output order, never by seeking
	// decodeOrderTS: the container's timestamps are in decode order for a stream that reorders.
	decodeOrderTS bool
	noSeek        bool // tests: take the seek-fallback path (re-open and skip packets) every time
	forceWorkers  int  // tests: > 1 decodes the segments on that many decoders whatever the cost model says
	// explicitColour: give the scaler the stream's colour matrix/range explicitly (as for GPU frames);
	// tests use it to check those options on CPU frames against the CLI.
	explicitColour bool

	info   Info
	orient Orientation // what Read applies
	hw     HWChoice
	hwType astiav.HardwareDeviceType

	closed bool
}

// Open opens path (a local file) with the limits in opts and runs the index scan.
func Open(path string, opts Options) (*Video, error) {
	name := path
	if opts.Name != "" {
		name = opts.Name
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, wrap(name, "open", err)
	}
	if err := checkLocalPath(path); err != nil {
		return nil, wrap(name, "open", err)
	}
	ffmpeg.InstallLogHook() // decoder errors are counted from here on (damage detection)
	v := &Video{path: path, name: name, opts: o, streamIndex: -1}
	if err := v.openInput(); err != nil {
		v.Close()
		return nil, v.explain("open", err)
	}
	if err := v.scan(); err != nil {
		v.Close()
		return nil, v.explain("index", err)
	}
	v.setupHW()
	v.buildInfo()
	return v, nil
}

// Probe opens path, returns its Info and closes it.
func Probe(path string, opts Options) (Info, error) {
	v, err := Open(path, opts)
	if err != nil {
		return Info{}, err
	}
	defer v.Close()
	return v.Info(), nil
}

// checkLocalPath accepts plain local file paths only: FFmpeg would otherwise open URLs and protocol
// chains (http://, concat:, pipe:, ...). The path is later passed as "file:<abs path>" with a "file"
// protocol whitelist, so a colon in a file name is never taken for a protocol.
func checkLocalPath(path string) error {
	if path == "" {
		return fmt.Errorf("%w: empty path", ErrNotFound)
	}
	if strings.Contains(path, "://") {
		return ErrNetworkProtocol
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if st.IsDir() {
		return fmt.Errorf("%w: a directory, not a video file", ErrNotFound)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: not a regular file", ErrNotFound)
	}
	if st.Size() == 0 {
		return ErrEmpty
	}
	// Readable by this process? FFmpeg would report EACCES as if the data were bad.
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	f.Close()
	return nil
}

// explain wraps an open/index error; an MP4/MOV whose box structure is cut short says so (FFmpeg's
// own error for it is whatever it tripped over first).
func (v *Video) explain(op string, err error) error {
	// A cut moov can look like anything: no video stream, an unknown codec, a bad size, "End of file".
	if isMovFamily(v.format) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrEmpty) && !errors.Is(err, ErrBadOption) &&
		!errors.Is(err, ErrNotMediaFile) && !errors.Is(err, ErrNoSuchStream) && !errors.Is(err, ErrTooManyStreams) {
		if why := mp4Truncation(v.path); why != "" {
			return wrap(v.name, op, fmt.Errorf("%w: %s (FFmpeg: %v)", ErrTruncated, why, err))
		}
	}
	return wrap(v.name, op, err)
}

// openInput opens the demuxer the first time: it checks what kind of file it is, opens it and
// selects the video stream.
func (v *Video) openInput() error {
	url, err := v.url()
	if err != nil {
		return err
	}
	// Playlists, lists and patterns are refused before any demuxer opens them (and the whitelist in
	// demuxerOptions makes FFmpeg refuse them too, for this open and for any nested one).
	name, err := checkFormat(url)
	v.format = name
	if err != nil {
		return err
	}
	fc, claims, err := v.openFormat(url)
	if err != nil {
		return err
	}
	v.fc = fc
	if err := v.selectStream(url, v.demuxerOptions()); err != nil {
		return err
	}
	return v.checkStream(fc, claims)
}

// openDemuxer opens one more demuxer on the file (positioned at its start) with the options and
// checks of the first open, for a reader of its own: a re-open (rewind) or a parallel segment. The
// caller owns it (closeDemuxer).
func (v *Video) openDemuxer() (*astiav.FormatContext, error) {
	url, err := v.url()
	if err != nil {
		return nil, err
	}
	fc, claims, err := v.openFormat(url)
	if err != nil {
		return nil, err
	}
	if v.streamIndex >= fc.NbStreams() {
		closeDemuxer(fc)
		return nil, fmt.Errorf("%w: stream %d vanished on re-opening", ErrCorrupt, v.streamIndex)
	}
	if err := v.checkStream(fc, claims); err != nil {
		closeDemuxer(fc)
		return nil, err
	}
	return fc, nil
}

func closeDemuxer(fc *astiav.FormatContext) {
	if fc != nil {
		fc.CloseInput()
		fc.Free()
		untrack(fc)
	}
}

// url is the path as FFmpeg opens it: "file:<abs path>", so a colon in a name is never a protocol.
func (v *Video) url() (string, error) {
	abs, err := filepath.Abs(v.path)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return "file:" + abs, nil
}

func (v *Video) demuxerOptions() []ffmpeg.Option {
	return []ffmpeg.Option{
		{Key: "protocol_whitelist", Value: "file"},
		{Key: "format_whitelist", Value: formatWhitelist},
		{Key: "probesize", Value: strconv.FormatInt(v.opts.ProbeSize, 10)},
		{Key: "analyzeduration", Value: strconv.FormatInt(v.opts.AnalyzeDuration.Microseconds(), 10)},
		// FFmpeg enforces the stream cap while parsing headers (so memory stays bounded) and reports
		// ENOMEM when a file exceeds it.
		{Key: "max_streams", Value: strconv.Itoa(v.opts.MaxStreams)},
	}
}

// openFormat opens url and reads its stream info; it returns the demuxer (the caller owns it) and
// each stream's size as the headers claim it, read before avformat_find_stream_info: a decoder that
// cannot take the claimed size is opened at 0x0 there ("Ignoring invalid width/height values"), which
// would hide the claim.
func (v *Video) openFormat(url string) (*astiav.FormatContext, [][2]int, error) {
	fc := astiav.AllocFormatContext()
	if fc == nil {
		return nil, nil, errors.New("cannot allocate a format context")
	}
	track(fc)
	d := astiav.NewDictionary()
	defer d.Free()
	for _, o := range v.demuxerOptions() {
		_ = d.Set(o.Key, o.Value, 0)
	}
	if err := fc.OpenInput(url, nil, d); err != nil {
		fc.Free() // avformat_open_input frees the context on failure; Free on nil is a no-op
		untrack(fc)
		if isENOMEM(err) {
			return nil, nil, fmt.Errorf("%w: more than %d streams (%w)", ErrTooManyStreams, v.opts.MaxStreams, err)
		}
		return nil, nil, classifyOpenErr(err, v.path)
	}
	claims := make([][2]int, fc.NbStreams())
	for i, s := range fc.Streams() {
		claims[i] = [2]int{s.CodecParameters().Width(), s.CodecParameters().Height()}
	}
	err := v.checkStreamCount(fc)
	if err == nil {
		if err = fc.FindStreamInfo(nil); err != nil {
			if isENOMEM(err) {
				err = fmt.Errorf("%w: more than %d streams (%w)", ErrTooManyStreams, v.opts.MaxStreams, err)
			} else {
				err = classifyOpenErr(err, v.path)
			}
		}
	}
	if err == nil {
		err = v.checkStreamCount(fc)
	}
	if err != nil {
		closeDemuxer(fc)
		return nil, nil, err
	}
	return fc, claims, nil
}

func (v *Video) checkStreamCount(fc *astiav.FormatContext) error {
	if n := fc.NbStreams(); n > v.opts.MaxStreams {
		return fmt.Errorf("%w: %d streams > %d", ErrTooManyStreams, n, v.opts.MaxStreams)
	}
	return nil
}

// checkStream checks the selected stream of fc: a decoder exists, and neither the headers' claimed
// size nor the stream's size is over the cap or empty.
func (v *Video) checkStream(fc *astiav.FormatContext, claims [][2]int) error {
	cp := fc.Streams()[v.streamIndex].CodecParameters()
	if astiav.FindDecoder(cp.CodecID()) == nil {
		return fmt.Errorf("%w: %s", ErrUnsupportedCodec, codecName(cp.CodecID()))
	}
	if v.streamIndex < len(claims) {
		if w, h := claims[v.streamIndex][0], claims[v.streamIndex][1]; int64(w)*int64(h) > int64(v.opts.MaxFrameArea) || w < 0 || h < 0 {
			return fmt.Errorf("%w: the headers claim %dx%d, over the cap of %d pixels (Options.MaxFrameArea)", ErrTooLarge, w, h, v.opts.MaxFrameArea)
		}
	}
	w, h := cp.Width(), cp.Height()
	if int64(w)*int64(h) > int64(v.opts.MaxFrameArea) || w < 0 || h < 0 {
		return fmt.Errorf("%w: %dx%d, over the cap of %d pixels (Options.MaxFrameArea)", ErrTooLarge, w, h, v.opts.MaxFrameArea)
	}
	if w == 0 || h == 0 {
		return fmt.Errorf("%w: stream %d has no frame size (%dx%d): neither its headers nor its first packets give one", ErrCorrupt, v.streamIndex, w, h)
	}
	return nil
}

func (v *Video) stream() *astiav.Stream { return v.fc.Streams()[v.streamIndex] }

func codecName(id astiav.CodecID) string {
	n := id.Name()
	if n == "" || n == "none" {
		return "unknown codec (no decoder)"
	}
	return n
}

func isENOMEM(err error) bool {
	var ae astiav.Error
	return errors.As(err, &ae) && int(ae) == -int(syscall.ENOMEM)
}

// classifyOpenErr maps FFmpeg's open errors to our causes, keeping FFmpeg's error in the chain. EIO and
// EPERM name an unreadable file only when the file cannot be opened: demuxers also return EIO for
// data they cannot parse (a WebM cut after its first bytes), which is corrupt data, not a missing file.
func classifyOpenErr(err error, path string) error {
	switch {
	case errors.Is(err, astiav.ErrProtocolNotFound):
		return fmt.Errorf("%w: %w", ErrNetworkProtocol, err)
	case errors.Is(err, astiav.ErrDecoderNotFound):
		return fmt.Errorf("%w: %w", ErrUnsupportedCodec, err)
	case errors.Is(err, astiav.ErrEio), errors.Is(err, astiav.ErrEperm):
		f, oerr := os.Open(path)
		if oerr != nil {
			return fmt.Errorf("%w: %w", ErrNotFound, oerr)
		}
		f.Close()
		return fmt.Errorf("%w: %w (the file is readable: its data is cut short or damaged)", ErrCorrupt, err)
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}

// scan demuxes every packet of the primary video stream (no decoding) and builds the frame index.
func (v *Video) scan() error {
	pkt := astiav.AllocPacket()
	track(pkt)
	defer func() { pkt.Free(); untrack(pkt) }()
	v.pkts = v.pkts[:0]
	codec := v.stream().CodecParameters().CodecID()
	extradata := v.stream().CodecParameters().ExtraData()
	nalLenSize, _ := h26x.HEVCConfig(extradata)
	disposable := disposableFunc(codec, extradata) // non-reference pictures (nonref.go)
	refs := newRefCollector(codec, extradata)      // reference pictures nobody uses (h26x/h264refs.go, hevcrefs.go)
	sawBVOP := false
	for {
		err := v.fc.ReadFrame(pkt)
		if errors.Is(err, astiav.ErrEof) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: demuxing stopped after %d video packets: %w", ErrCorrupt, len(v.pkts), err)
		}
		if pkt.StreamIndex() == v.streamIndex {
			fl := pkt.Flags()
			p := packetInfo{pts: pkt.Pts(), dts: pkt.Dts(), pos: pkt.Pos(),
				key: fl.Has(astiav.PacketFlagKey), discard: fl.Has(astiav.PacketFlagDiscard), cut: fl.Has(astiav.PacketFlagCorrupt), frames: 1}
			var head h26x.View
			if codec == astiav.CodecIDH264 || codec == astiav.CodecIDHevc {
				head = packetHead(pkt)
			}
			switch {
			case p.discard:
				// Edit lists: the decoder drops frames from packets flagged discard (FFmpeg decode.c).
				p.frames = 0
			case codec == astiav.CodecIDVp9:
				p.frames = vp9ShownFrames(pkt.Data())
			case codec == astiav.CodecIDVp8:
				p.frames = vp8ShownFrames(pkt.Data())
			case codec == astiav.CodecIDHevc && !p.key:
				p.rasl = decide(pkt, head, func(pv h26x.View) (bool, bool) { return h26x.HEVCIsRASL(pv, nalLenSize) })
			case codec == astiav.CodecIDMpeg4 && !sawBVOP:
				sawBVOP = mpeg4HasBVOP(pkt.Data())
			}
			p.nonref = disposable != nil && decide(pkt, head, disposable)
			refs.Add(head, func() h26x.View { return h26x.Whole(pkt.Data()) })
			v.pkts = append(v.pkts, p)
		}
		pkt.Unref()
	}
	v.refs = refs.result(len(v.pkts))
	v.decodeOrderTS = decodeOrderTimestamps(v.fc.InputFormat(), codec, sawBVOP, v.pkts)
	switch codec {
	case astiav.CodecIDH264, astiav.CodecIDHevc:
		dropUndecodableStart(v.pkts, codec == astiav.CodecIDHevc)
	}
	return v.buildIndex()
}

// dropUndecodableStart marks the pictures FFmpeg's H.264/HEVC decoders never output when a stream
// does not begin at a clean random access point (a cut file, a capture joined mid-GOP): packets before
// the first keyframe, and the leading pictures of that first keyframe (decode order after it,
// presentation before it, or without a timestamp), whose references lie before the cut. HEVC keeps
// its RADL pictures (decodable leading pictures) and drops RASL ones, as its decoder does.
func dropUndecodableStart(pkts []packetInfo, hevc bool) {
	k0 := -1
	for d, p := range pkts {
		if p.key {
			k0 = d
			break
		}
	}
	if k0 < 0 {
		return // no keyframe flags at all: nothing to go by, keep every packet
	}
	for d := 0; d < k0; d++ {
		pkts[d].frames = 0
	}
	kp := pkts[k0].pts
	for d := k0 + 1; d < len(pkts) && !pkts[d].key; d++ {
		p := &pkts[d]
		// Without a timestamp on the keyframe (raw elementary streams) nothing can be told apart.
		leading := kp != astiav.NoPtsValue && (p.pts == astiav.NoPtsValue || p.pts < kp)
		if !leading || p.frames == 0 {
			continue
		}
		if hevc && !p.rasl {
			continue
		}
		p.frames = 0
	}
}

// indexFrame is one picture while the index is built: its pts and its packet.
type indexFrame struct {
	pts  int64
	key  bool
	dpos int
}

func (v *Video) buildIndex() error {
	st := v.stream()
	tb := Rational{st.TimeBase().Num(), st.TimeBase().Den()}
	frames, counting := v.indexFrames()
	if len(frames) == 0 {
		return ErrNoFrames
	}
	if counting {
		tb = v.outputOrderTimes(frames, tb)
	}
	n := len(frames)
	v.counting = counting
	v.idx = Index{TimeBase: tb, PTS: make([]int64, n), Seconds: make([]float64, n), Key: make([]bool, n)}
	v.frameDpos = make([]int, n)
	v.ptsFrame = make(map[int64]int, n)
	for i, f := range frames {
		v.idx.PTS[i] = f.pts
		v.idx.Seconds[i] = float64(f.pts) * float64(tb.Num) / float64(tb.Den)
		v.idx.Key[i] = f.key
		v.frameDpos[i] = f.dpos
		v.ptsFrame[f.pts] = i
		if f.dpos >= 0 && f.dpos < len(v.pkts) && v.pkts[f.dpos].cut {
			v.idx.Cut = append(v.idx.Cut, i)
		}
	}
	v.posDpos = make(map[int64]int, len(v.pkts))
	for d, p := range v.pkts {
		if p.pos >= 0 {
			if _, dup := v.posDpos[p.pos]; dup {
				v.posDpos = nil // positions do not identify packets here; fall back to timestamps
				break
			}
			v.posDpos[p.pos] = d
		}
	}
	v.refCum = make([]int32, len(v.pkts)+1)
	for d, p := range v.pkts {
		v.refCum[d+1] = v.refCum[d]
		if !p.nonref || counting { // by output order, a picture left out would shift the count
			v.refCum[d+1]++
		}
	}
	return nil
}

// indexFrames lists the pictures the decoder outputs, in presentation order (pts), or in decode order
// with counting set when timestamps cannot identify them: AVI stores decode-order timestamps only
// (with B-frames the decoder's output pts cannot be matched to packets), a packet has no pts or holds
// several pictures, or two pictures share a pts.
func (v *Video) indexFrames() ([]indexFrame, bool) {
	var frames []indexFrame
	counting := v.decodeOrderTS
	for d, p := range v.pkts {
		for k := 0; k < p.frames; k++ {
			if p.pts == astiav.NoPtsValue || k > 0 {
				counting = true
			}
			frames = append(frames, indexFrame{pts: p.pts, key: p.key, dpos: d})
		}
	}
	if !counting {
		sort.SliceStable(frames, func(i, j int) bool { return frames[i].pts < frames[j].pts })
		for i := 1; i < len(frames); i++ {
			if frames[i].pts == frames[i-1].pts {
				counting = true // duplicate timestamps: pts cannot identify frames
				break
			}
		}
	}
	if counting {
		sort.SliceStable(frames, func(i, j int) bool { return frames[i].dpos < frames[j].dpos })
	}
	return frames, counting
}

// outputOrderTimes gives frames (in decode order) their timestamps when they are identified by output
// order: the packets' dts when every packet has an increasing one, else synthesized from the nominal
// frame rate (raw elementary streams carry none), in a time base of 1/fps that it returns.
func (v *Video) outputOrderTimes(frames []indexFrame, tb Rational) Rational {
	useDts := true
	for i, f := range frames {
		d := v.pkts[f.dpos].dts
		if d == astiav.NoPtsValue || (i > 0 && d <= v.pkts[frames[i-1].dpos].dts) {
			useDts = false
			break
		}
	}
	if useDts {
		for i := range frames {
			frames[i].pts = v.pkts[frames[i].dpos].dts
		}
		return tb
	}
	st := v.stream()
	r := st.AvgFrameRate()
	if r.Num() <= 0 || r.Den() <= 0 {
		r = st.RFrameRate()
	}
	if r.Num() <= 0 || r.Den() <= 0 {
		r = astiav.NewRational(25, 1)
	}
	for i := range frames {
		frames[i].pts = int64(i)
	}
	return Rational{r.Den(), r.Num()}
}

// vp9ShownFrames counts the frames a VP9 packet makes the decoder output: hidden (alt-ref) frames are
// decoded but not shown; a superframe bundles several. Unparseable data counts as one frame so a
// broken packet is reported as a failed frame instead of silently vanishing from the index.
func vp9ShownFrames(b []byte) int {
	if len(b) == 0 {
		return 1
	}
	last := b[len(b)-1]
	if last&0xe0 == 0xc0 {
		nf := int(last&7) + 1
		mag := int((last>>3)&3) + 1
		sz := 2 + mag*nf
		if len(b) >= sz && b[len(b)-sz] == last {
			p := len(b) - sz + 1
			off, shown := 0, 0
			for i := 0; i < nf; i++ {
				fs := 0
				for k := 0; k < mag; k++ {
					fs |= int(b[p]) << (8 * k)
					p++
				}
				if fs == 0 || off+fs > len(b)-sz {
					return 1
				}
				shown += vp9FrameShown(b[off : off+fs])
				off += fs
			}
			if shown == 0 {
				return 0
			}
			return shown
		}
	}
	return vp9FrameShown(b)
}

func vp9FrameShown(b []byte) int {
	if len(b) == 0 {
		return 1
	}
	bit := func(i int) int { return int(b[0]>>(7-i)) & 1 }
	if b[0]>>6 != 2 { // frame_marker
		return 1
	}
	profile := bit(2) | bit(3)<<1
	i := 4
	if profile == 3 {
		i++ // reserved_zero
	}
	if bit(i) == 1 { // show_existing_frame
		return 1
	}
	// frame_type, then show_frame
	if i+2 > 7 {
		return 1
	}
	return bit(i + 2)
}

// vp8ShownFrames reads show_frame from the VP8 frame tag (RFC 6386 §9.1).
func vp8ShownFrames(b []byte) int {
	if len(b) < 3 {
		return 1
	}
	return int(b[0]>>4) & 1
}

// NumFrames is the number of frames in the index.
func (v *Video) NumFrames() int { return len(v.idx.PTS) }

// Index returns the frame index (shared: do not modify).
func (v *Video) Index() Index { return v.idx }

// Path returns the path given to Open.
func (v *Video) Path() string { return v.path }

// Close releases every FFmpeg resource. It is idempotent.
func (v *Video) Close() error {
	if v == nil || v.closed {
		return nil
	}
	v.closed = true
	closeDemuxer(v.fc)
	v.fc = nil
	return nil
}

func (v *Video) setupHW() {
	req, _ := ParseHWAccel(v.opts.HWAccel)
	cp := v.stream().CodecParameters()
	t := traitsOf(cp)
	v.hw = SelectHW(req, t)
	if v.hw.Device == "" {
		return
	}
	// Device creation is the real availability check; a machine without the GPU/driver fails here.
	tries := []HWAccel{v.hw.Device}
	if req == HWAuto && v.hw.Device == HWCUDA {
		if ok, _ := vaapiSupports(t); ok {
			tries = append(tries, HWVAAPI)
		}
	}
	var reasons []string
	for _, dev := range tries {
		typ := astiav.FindHardwareDeviceTypeByName(string(dev))
		if typ == astiav.HardwareDeviceTypeNone {
			reasons = append(reasons, string(dev)+": device type not built into this FFmpeg")
			continue
		}
		if hwPixFmt(hwDecoder(cp.CodecID(), typ), typ) == astiav.PixelFormatNone {
			reasons = append(reasons, fmt.Sprintf("%s: the %s decoder has no %s hardware config", dev, codecName(cp.CodecID()), dev))
			continue
		}
		hdc, err := astiav.CreateHardwareDeviceContext(typ, "", nil)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("%s: device creation failed: %v", dev, err))
			continue
		}
		releaseHWDevice(hdc)
		v.hw = HWChoice{Device: dev}
		v.hwType = typ
		return
	}
	v.hw = HWChoice{Fallback: strings.Join(reasons, "; ")}
}

// releaseHWDevice drops a device reference: go-astiav v0.16 has no Free for it, but a codec context
// takes ownership of the reference it is given and releases it in Free.
func releaseHWDevice(hdc *astiav.HardwareDeviceContext) {
	cc := astiav.AllocCodecContext(nil)
	if cc == nil {
		return
	}
	cc.SetHardwareDeviceContext(hdc)
	cc.Free()
}

// hwDecoder is the decoder to use with a hardware device: the default one when it has a config for
// the device, else FFmpeg's native decoder of that name (Debian's FFmpeg prefers libdav1d for AV1,
// which has no hardware configs; the native "av1" decoder has the NVDEC/VA-API ones).
func hwDecoder(id astiav.CodecID, typ astiav.HardwareDeviceType) *astiav.Codec {
	c := astiav.FindDecoder(id)
	if hwPixFmt(c, typ) != astiav.PixelFormatNone {
		return c
	}
	if n := astiav.FindDecoderByName(codecName(id)); n != nil && hwPixFmt(n, typ) != astiav.PixelFormatNone {
		return n
	}
	return c
}

func hwPixFmt(c *astiav.Codec, typ astiav.HardwareDeviceType) astiav.PixelFormat {
	if c == nil {
		return astiav.PixelFormatNone
	}
	for _, p := range c.HardwareConfigs() {
		if p.MethodFlags().Has(astiav.CodecHardwareConfigMethodFlagHwDeviceCtx) && p.HardwareDeviceType() == typ {
			return p.PixelFormat()
		}
	}
	return astiav.PixelFormatNone
}

// traitsOf derives codec, bit depth and chroma subsampling from the stream's pixel format name.
func traitsOf(cp *astiav.CodecParameters) StreamTraits {
	t := StreamTraits{Codec: codecName(cp.CodecID()), BitDepth: 8, Chroma: "420"}
	pf := cp.PixelFormat().String()
	switch {
	case strings.Contains(pf, "444"), strings.HasPrefix(pf, "gbr"):
		t.Chroma = "444"
	case strings.Contains(pf, "422"):
		t.Chroma = "422"
	case strings.HasPrefix(pf, "gray"):
		t.Chroma = "400"
	}
	for _, d := range []int{16, 14, 12, 10, 9} {
		if strings.Contains(pf, "p"+strconv.Itoa(d)) || strings.HasSuffix(strings.TrimSuffix(strings.TrimSuffix(pf, "le"), "be"), strconv.Itoa(d)) {
			t.BitDepth = d
			break
		}
	}
	return t
}

// decodeOrderTS reports a container that carries decode-order timestamps only (AVI: pts = dts for
// every packet) holding a codec that reorders pictures (MPEG-4 Part 2 with B-VOPs; H.264, HEVC,
// MPEG-1/2, VC-1 may): the decoder's output pts then do not map to packets.
func decodeOrderTimestamps(f *astiav.InputFormat, codec astiav.CodecID, sawBVOP bool, pkts []packetInfo) bool {
	if f == nil || !strings.Contains(f.Name(), "avi") {
		return false
	}
	switch codec {
	case astiav.CodecIDMpeg4:
		if !sawBVOP {
			return false
		}
	case astiav.CodecIDH264, astiav.CodecIDHevc, astiav.CodecIDMpeg1Video, astiav.CodecIDMpeg2Video, astiav.CodecIDVc1:
	default:
		return false
	}
	for _, p := range pkts {
		if p.frames > 0 && p.pts != p.dts && p.dts != astiav.NoPtsValue {
			return false
		}
	}
	return true
}

// mpeg4HasBVOP reports whether an MPEG-4 Part 2 packet holds a B-VOP (vop_coding_type 2 after the VOP
// start code 00 00 01 B6).
func mpeg4HasBVOP(b []byte) bool {
	for i := 0; i+4 < len(b); i++ {
		if b[i] == 0 && b[i+1] == 0 && b[i+2] == 1 && b[i+3] == 0xB6 {
			if b[i+4]>>6 == 2 {
				return true
			}
			i += 3
		}
	}
	return false
}
