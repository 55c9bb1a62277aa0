package main

import (
	"context"
	"fmt"
	"io"

	"github.com/framesweep/framesweep/extract"
)

// runProbe: framesweep probe VIDEO [--json] [--frames-detail] [decode flags]
func runProbe(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("probe", stderr)
	asJSON := addJSON(fs, false)
	detail := fs.Bool("frames-detail", false, "add per-frame pts_s and key (JSON)")
	dec := addDecodeFlags(fs, dStream|dRotate|dHWAccel|dWorker)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep probe VIDEO [--json] [--frames-detail] [--stream N] [--no-autorotate] [--hwaccel none|cuda|vaapi|auto] [--worker]")
		printFlags(fs)
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) != 1 {
		return usageErr(stderr, "probe", "want exactly one VIDEO, got %d arguments", len(pos))
	}
	o, err := dec.d.Options()
	if err != nil {
		return usageErr(stderr, "probe", "%v", err)
	}
	o.FramesDetail = *detail
	info, err := extract.Probe(context.Background(), pos[0], o)
	if err != nil {
		return failErr(stderr, "probe", err)
	}
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
