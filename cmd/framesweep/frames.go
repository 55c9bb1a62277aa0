package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/rgb"
)

// frameTransform turns a decoded frame into the images written to disk: one, or a tiled layout's
// tiles followed by its thumbnail. The default writes the frame at source size; `--size`/`--preset`
// (frames_resize.go) plug in here by returning another transform.
type frameTransform func(f *decode.Frame) ([]*rgb.Image, error)

func sourceSize(f *decode.Frame) ([]*rgb.Image, error) { return []*rgb.Image{&f.Image}, nil }

// runFrames: framesweep frames VIDEO --indices 0,5,99 --out DIR [--stream N] [--on-damaged fail|keep]
// [--no-autorotate] [--hwaccel X]
func runFrames(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("frames", stderr)
	idxFlag := fs.String("indices", "", "comma-separated frame indices (required)")
	out := fs.String("out", "", "output directory (required)")
	noRot := fs.Bool("no-autorotate", false, "do not apply the display rotation/reflection")
	hw := fs.String("hwaccel", "", "hardware decoding: none, cuda, vaapi, auto")
	stream := addStreamFlag(fs)
	onDamaged := addOnDamagedFlag(fs)
	rf := addResizeFlags(fs) // --size, --kernel, --preset (frames_resize.go)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep frames VIDEO --indices 0,5,99 --out DIR [--size WxH | --preset NAME] [--kernel K] [--stream N] [--on-damaged fail|keep] [--no-autorotate] [--hwaccel none|cuda|vaapi|auto]")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) != 1 {
		return usageErr(stderr, "frames", "want exactly one VIDEO, got %d arguments", len(pos))
	}
	if *out == "" {
		return usageErr(stderr, "frames", "--out DIR is required")
	}
	indices, err := parseIndices(*idxFlag)
	if err != nil {
		return usageErr(stderr, "frames", "--indices: %v", err)
	}
	if _, err := decode.ParseHWAccel(*hw); err != nil {
		return usageErr(stderr, "frames", "%v", err)
	}
	policy, err := decode.ParseDamagePolicy(*onDamaged)
	if err != nil {
		return usageErr(stderr, "frames", "--on-damaged: %v", err)
	}
	streamSel, err := stream.get()
	if err != nil {
		return usageErr(stderr, "frames", "%v", err)
	}
	tf, err := rf.transform(pos[0], len(indices))
	if err != nil {
		return usageErr(stderr, "frames", "%v", err)
	}
	opts := decode.Options{NoAutorotate: *noRot, HWAccel: *hw, Stream: streamSel, OnDamaged: policy}
	return extractFrames(pos[0], indices, *out, opts, tf, stdout, stderr)
}

// streamFlag is --stream N (probe, frames): the video stream by its index in the file; absent =
// FFmpeg's best video stream.
type streamFlag struct{ n *int }

// addOnDamagedFlag is --on-damaged, the same in every command that decodes (default fail).
func addOnDamagedFlag(fs *flag.FlagSet) *string {
	return fs.String("on-damaged", string(decode.DamagedFail), "a frame the decoder concealed: fail (refuse it; what needs it fails, exit 1) or keep (use it; listed as damaged)")
}

func addStreamFlag(fs *flag.FlagSet) streamFlag {
	return streamFlag{fs.Int("stream", -1, "video stream index in the file (ffprobe's numbering); default: FFmpeg's best video stream")}
}

// get is the flag as decode.Options.Stream (nil when absent); a negative index is bad usage.
func (s streamFlag) get() (*int, error) {
	switch {
	case *s.n == -1:
		return nil, nil
	case *s.n < 0:
		return nil, fmt.Errorf("--stream %d: want a stream index ≥ 0", *s.n)
	}
	return decode.StreamAt(*s.n), nil
}

func parseIndices(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("required (e.g. --indices 0,5,99)")
	}
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", p)
		}
		if n < 0 {
			return nil, fmt.Errorf("negative index %d", n)
		}
		out = append(out, n)
	}
	return out, nil
}

type framesResult struct {
	Path        string       `json:"path"`
	StreamIndex int          `json:"stream_index"` // the video stream the frames come from
	Out         string       `json:"out"`
	Written     []string     `json:"written"`
	Indices     []int        `json:"indices"`
	PTSS        []float64    `json:"pts_s"`
	Stats       decode.Stats `json:"stats"`
}

func extractFrames(video string, indices []int, dir string, opts decode.Options, tf frameTransform, stdout, stderr io.Writer) int {
	v, err := decode.Open(video, opts)
	if err != nil {
		return failErr(stderr, "frames", err)
	}
	defer v.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return failErr(stderr, "frames", err)
	}
	res := framesResult{Path: video, StreamIndex: v.Info().StreamIndex, Out: dir}
	st, err := v.Read(indices, func(f *decode.Frame) error {
		imgs, err := tf(f)
		if err != nil {
			return err
		}
		for k, img := range imgs {
			// One image per frame: 000005.png; a tiled layout: 000005_00.png, 000005_01.png, … with
			// the thumbnail last, in the order the model receives them.
			name := filepath.Join(dir, fmt.Sprintf("%06d.png", f.Index))
			if len(imgs) > 1 {
				name = filepath.Join(dir, fmt.Sprintf("%06d_%02d.png", f.Index, k))
			}
			if err := writePNG(name, img); err != nil {
				return err
			}
			res.Written = append(res.Written, name)
		}
		res.Indices = append(res.Indices, f.Index)
		res.PTSS = append(res.PTSS, f.Seconds)
		return nil
	})
	res.Stats = st
	if err != nil {
		if len(res.Written) > 0 {
			_ = writeJSON(stdout, res)
		}
		return failErr(stderr, "frames", err)
	}
	if err := writeJSON(stdout, res); err != nil {
		return failErr(stderr, "frames", err)
	}
	return exitOK
}

// writePNG writes an 8-bit RGB PNG (an opaque NRGBA, which png encodes as RGB).
func writePNG(name string, m *rgb.Image) error {
	im := m.NRGBA()
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = png.Encode(w, im)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name) // a truncated PNG (disk full) must not sit beside the good ones
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
