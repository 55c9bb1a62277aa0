package extract

import (
	"context"
	"fmt"
	"strings"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/pipeline"
)

// HWProbe is what decoding a clip with a hardware decoder showed (`framesweep doctor`'s NVDEC lines).
type HWProbe struct {
	// Status: "ok" (frames came from the device), "cpu" (framesweep's policy keeps this stream on the
	// CPU, decode.SelectHW) or "missing" (the device could not decode it).
	Status string
	Detail string // the frames decoded, the policy's reason or FFmpeg's
}

// ProbeNVDEC decodes the first two frames of path with FFmpeg's cuda hwaccel, through the source layer
// as every video is opened, and says where they were decoded.
func ProbeNVDEC(ctx context.Context, path string) HWProbe {
	_, src, err := pipeline.OpenSource(ctx, pipeline.VideoRef{Path: path}, pipeline.Options{HWAccel: string(decode.HWCUDA), Threads: 1})
	if err != nil {
		return HWProbe{"missing", err.Error()}
	}
	defer src.Close()
	n := 0
	st, err := src.Read([]int{0, 1}, func(*decode.Frame) error { n++; return nil })
	switch {
	case err != nil:
		return HWProbe{"missing", err.Error()}
	case st.HWAccel == string(decode.HWCUDA):
		return HWProbe{"ok", fmt.Sprintf("%d frames decoded on the device", n)}
	case strings.Contains(st.HWFallback, "NVDEC cannot") || strings.Contains(st.HWFallback, "NVDEC decodes"):
		return HWProbe{"cpu", "kept on the CPU by framesweep's policy: " + st.HWFallback}
	}
	why := "decoded on the CPU: " + st.HWFallback
	if strings.Contains(st.HWFallback, "device creation failed") {
		why += " (FFmpeg's cuda hwaccel needs the driver's libcuda.so.1 and a GPU)"
	}
	return HWProbe{"missing", why}
}
