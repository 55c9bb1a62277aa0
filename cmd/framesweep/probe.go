package main

import (
	"context"
	"fmt"
	"io"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/pipeline"
)

// runProbe: framesweep probe VIDEO [--json] [--frames-detail] [--stream N] [--no-autorotate] [--hwaccel X]
func runProbe(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("probe", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	detail := fs.Bool("frames-detail", false, "add per-frame pts_s and key")
	noRot := fs.Bool("no-autorotate", false, "do not apply the display rotation/reflection")
	hw := fs.String("hwaccel", "", "hardware decoding: none, cuda, vaapi, auto")
	stream := addStreamFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep probe VIDEO [--json] [--frames-detail] [--stream N] [--no-autorotate] [--hwaccel none|cuda|vaapi|auto]")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) != 1 {
		return usageErr(stderr, "probe", "want exactly one VIDEO, got %d arguments", len(pos))
	}
	if _, err := decode.ParseHWAccel(*hw); err != nil {
		return usageErr(stderr, "probe", "%v", err)
	}
	streamSel, err := stream.get()
	if err != nil {
		return usageErr(stderr, "probe", "%v", err)
	}
	o := pipeline.Options{NoAutorotate: *noRot, HWAccel: *hw, Stream: streamSel, FramesDetail: *detail}
	v, src, err := pipeline.OpenSource(context.Background(), pipeline.VideoRef{Path: pos[0]}, o)
	if err != nil {
		return failErr(stderr, "probe", err)
	}
	src.Close()
	info := v.Info
	if *asJSON || *detail {
		if err := writeJSON(stdout, info); err != nil {
			return failErr(stderr, "probe", err)
		}
		return exitOK
	}
	hdr := "?"
	if info.FramesHeader != nil {
		hdr = fmt.Sprint(*info.FramesHeader)
	}
	fmt.Fprintf(stdout, "%s: %s %s %s %dx%d (out %dx%d, rotation %d, autorotate applied %v)\n",
		info.Path, info.Container, info.Codec, info.PixFmt, info.Width, info.Height, info.OutWidth, info.OutHeight,
		info.Rotation, info.Orientation.Applied)
	fmt.Fprintf(stdout, "  stream %d (%s; video streams %v)\n", info.StreamIndex, info.StreamSelection, info.VideoStreams)
	fmt.Fprintf(stdout, "  frames %d (header %s), %.3f fps, duration %.3f s, start %.3f s, keyframes %d, vfr %v, hwaccel %s\n",
		info.Frames, hdr, info.FPS, info.DurationS, info.StartS, info.Keyframes, info.VFR, info.HWAccel)
	if info.HWAccelFallback != "" {
		fmt.Fprintf(stdout, "  hwaccel fallback: %s\n", info.HWAccelFallback)
	}
	return exitOK
}
