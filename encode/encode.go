package encode

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"

	"github.com/asticode/go-astiav"

	"github.com/framesweep/framesweep/native/ffmpeg"
	"github.com/framesweep/framesweep/rgb"
)

// Errors: every error of this package wraps one of these (errors.Is).
var (
	// ErrInput: no frames, frames of different sizes, an invalid frame, a rate that is not a positive
	// fraction, or more than MaxFrames frames.
	ErrInput = errors.New("encode: bad input")
	// ErrFFmpeg: FFmpeg refused a step (no PNG encoder or MP4 muxer in this build, an I/O error).
	ErrFFmpeg = errors.New("encode: FFmpeg failed")
)

// Limits that bound a call's memory and time.
const (
	MaxFrames = 4096 // frames in one file
	// MaxRateTerm bounds the numerator and denominator of a Rate: MP4 keeps the time scale (the
	// numerator, doubled up to ≥ 10000 by the muxer) in 32 bits.
	MaxRateTerm = 1 << 20
)

// Rate is a frame rate of Num/Den frames per second, both in [1, MaxRateTerm].
type Rate struct{ Num, Den int }

// FPS is the rate as a float64, the value a reader computes from the file (FFmpeg's avg_frame_rate
// num/den, as decord's get_avg_fps returns it).
func (r Rate) FPS() float64 { return float64(r.Num) / float64(r.Den) }

func (r Rate) String() string { return fmt.Sprintf("%d/%d", r.Num, r.Den) }

// RateOf is the fraction with both terms ≤ MaxRateTerm nearest to fps (the last continued-fraction
// convergent within the bound; exact for rates such as 2, 30000/1001 or 48/31). ErrInput when fps is
// not a finite rate in [1/MaxRateTerm, MaxRateTerm].
func RateOf(fps float64) (Rate, error) {
	if math.IsNaN(fps) || math.IsInf(fps, 0) || fps < 1.0/MaxRateTerm || fps > MaxRateTerm {
		return Rate{}, fmt.Errorf("%w: frame rate %v outside [1/%d, %d]", ErrInput, fps, MaxRateTerm, MaxRateTerm)
	}
	x := new(big.Rat).SetFloat64(fps)
	// Convergents h/k of the continued fraction of x, kept while both terms fit.
	h0, h1 := big.NewInt(0), big.NewInt(1)
	k0, k1 := big.NewInt(1), big.NewInt(0)
	best := Rate{Num: int(math.Round(fps)), Den: 1}
	limit := big.NewInt(MaxRateTerm)
	for range 64 {
		a := new(big.Int).Quo(x.Num(), x.Denom())
		h2 := new(big.Int).Add(new(big.Int).Mul(a, h1), h0)
		k2 := new(big.Int).Add(new(big.Int).Mul(a, k1), k0)
		if h2.Cmp(limit) > 0 || k2.Cmp(limit) > 0 {
			break
		}
		best = Rate{Num: int(h2.Int64()), Den: int(k2.Int64())}
		frac := new(big.Rat).Sub(x, new(big.Rat).SetInt(a))
		if frac.Sign() == 0 {
			break
		}
		x = frac.Inv(frac)
		h0, h1, k0, k1 = h1, h2, k1, k2
	}
	if best.Num < 1 {
		best.Num = 1
	}
	return best, nil
}

// PNGMP4 writes frames (all one size) as an MP4 file, each frame one picture of FFmpeg's PNG encoder
// (RGB24, lossless) at a constant rate: frame i at i·Den/Num seconds, each lasting Den/Num, the first
// at 0. A reader's frame count is len(frames) and its average rate exactly r (the muxer's time scale
// is a multiple of Num), so decoding returns exactly the frames given.
//
// The file is written through a temporary file in dir ("" = os.TempDir()), removed before return:
// FFmpeg's MP4 muxer needs a seekable output, and go-astiav v0.16.0's custom I/O callbacks stay
// registered after free.
func PNGMP4(frames []*rgb.Image, r Rate, dir string) ([]byte, error) {
	if err := check(frames, r); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, "framesweep-*.mp4")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFFmpeg, err)
	}
	path := tmp.Name()
	tmp.Close()
	defer os.Remove(path)
	if err := writeMP4(path, frames, r); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

func check(frames []*rgb.Image, r Rate) error {
	if len(frames) == 0 || len(frames) > MaxFrames {
		return fmt.Errorf("%w: %d frames (want 1..%d)", ErrInput, len(frames), MaxFrames)
	}
	if r.Num < 1 || r.Den < 1 || r.Num > MaxRateTerm || r.Den > MaxRateTerm {
		return fmt.Errorf("%w: rate %v (want terms in 1..%d)", ErrInput, r, MaxRateTerm)
	}
	for i, f := range frames {
		if f == nil {
			return fmt.Errorf("%w: frame %d is nil", ErrInput, i)
		}
		if err := f.Validate(); err != nil {
			return fmt.Errorf("%w: frame %d: %v", ErrInput, i, err)
		}
		if f.W != frames[0].W || f.H != frames[0].H {
			return fmt.Errorf("%w: frame %d is %dx%d, frame 0 %dx%d", ErrInput, i, f.W, f.H, frames[0].W, frames[0].H)
		}
	}
	return nil
}

// ffErr wraps an FFmpeg error with the step that failed.
func ffErr(op string, err error) error { return fmt.Errorf("%w: %s: %v", ErrFFmpeg, op, err) }

// writeMP4 encodes and muxes the frames into path. Every FFmpeg object it allocates is freed before
// it returns.
func writeMP4(path string, frames []*rgb.Image, r Rate) error {
	codec := astiav.FindEncoder(astiav.CodecIDPng)
	if codec == nil {
		return ffErr("find encoder", errors.New("no PNG encoder in this FFmpeg"))
	}
	fc, err := astiav.AllocOutputFormatContext(nil, "mp4", "")
	if err != nil {
		return ffErr("mp4 muxer", err)
	}
	defer fc.Free()
	cc := astiav.AllocCodecContext(codec)
	if cc == nil {
		return ffErr("codec context", errors.New("allocation failed"))
	}
	defer cc.Free()
	w, h := frames[0].W, frames[0].H
	cc.SetWidth(w)
	cc.SetHeight(h)
	cc.SetPixelFormat(astiav.PixelFormatRgb24)
	cc.SetTimeBase(astiav.NewRational(r.Den, r.Num)) // one tick per frame
	cc.SetFramerate(astiav.NewRational(r.Num, r.Den))
	if fc.OutputFormat().Flags().Has(astiav.IOFormatFlagGlobalheader) {
		cc.SetFlags(cc.Flags().Add(astiav.CodecContextFlagGlobalHeader))
	}
	if err := cc.Open(codec, nil); err != nil {
		return ffErr("open PNG encoder", err)
	}
	st := fc.NewStream(nil)
	if st == nil {
		return ffErr("new stream", errors.New("allocation failed"))
	}
	if err := cc.ToCodecParameters(st.CodecParameters()); err != nil {
		return ffErr("codec parameters", err)
	}
	st.SetTimeBase(cc.TimeBase())
	st.SetAvgFrameRate(astiav.NewRational(r.Num, r.Den))
	ioc, err := astiav.OpenIOContext(path, astiav.NewIOContextFlags(astiav.IOContextFlagWrite))
	if err != nil {
		return ffErr("open output", err)
	}
	defer ioc.Close()
	fc.SetPb(ioc)
	if err := fc.WriteHeader(nil); err != nil {
		return ffErr("write header", err)
	}
	if err := encodeFrames(fc, cc, st, frames); err != nil {
		return err
	}
	if err := fc.WriteTrailer(); err != nil {
		return ffErr("write trailer", err)
	}
	return nil
}

// encodeFrames sends every frame through the encoder and writes its packets, then flushes.
func encodeFrames(fc *astiav.FormatContext, cc *astiav.CodecContext, st *astiav.Stream, frames []*rgb.Image) error {
	f := astiav.AllocFrame()
	defer f.Free()
	f.SetWidth(frames[0].W)
	f.SetHeight(frames[0].H)
	f.SetPixelFormat(astiav.PixelFormatRgb24)
	if err := f.AllocBuffer(0); err != nil {
		return ffErr("frame buffer", err)
	}
	pkt := astiav.AllocPacket()
	defer pkt.Free()
	for i, m := range frames {
		if err := ffmpeg.FillRGB24(f, m.Pix, m.W, m.H, m.Stride); err != nil {
			return ffErr(fmt.Sprintf("frame %d", i), err)
		}
		f.SetPts(int64(i))
		if err := cc.SendFrame(f); err != nil {
			return ffErr(fmt.Sprintf("encode frame %d", i), err)
		}
		if err := drain(fc, cc, st, pkt); err != nil {
			return err
		}
	}
	if err := cc.SendFrame(nil); err != nil {
		return ffErr("flush encoder", err)
	}
	return drain(fc, cc, st, pkt)
}

// drain writes every packet the encoder has ready, each lasting one frame.
func drain(fc *astiav.FormatContext, cc *astiav.CodecContext, st *astiav.Stream, pkt *astiav.Packet) error {
	for {
		err := cc.ReceivePacket(pkt)
		if errors.Is(err, astiav.ErrEagain) || errors.Is(err, astiav.ErrEof) {
			return nil
		}
		if err != nil {
			return ffErr("encode", err)
		}
		// The muxer needs each sample's duration: the last one's sets the file's length, and so the
		// average rate a reader derives.
		pkt.SetDuration(1)
		pkt.RescaleTs(cc.TimeBase(), st.TimeBase())
		pkt.SetStreamIndex(st.Index())
		err = fc.WriteInterleavedFrame(pkt) // takes the packet's reference
		if err != nil {
			return ffErr("write packet", err)
		}
	}
}
