// Package testframes extracts a few real video frames with the ffmpeg CLI for the llm backends' tests,
// independent of the decode package.
package testframes

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"

	"github.com/framesweep/framesweep/rgb"
)

// Video is a real test video (Apache-2.0, androidx/media) among the shared videos: its path is
// testenv.SharedVideo(t, Video).
const Video = "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4"

// Extract decodes the frames with the given indices, scaled to w×h, as RGB24 images.
func Extract(video string, indices []int, w, h int) ([]*rgb.Image, error) {
	sel := make([]string, len(indices))
	for i, n := range indices {
		sel[i] = fmt.Sprintf("eq(n\\,%d)", n)
	}
	vf := fmt.Sprintf("select='%s',scale=%d:%d:flags=bilinear", strings.Join(sel, "+"), w, h)
	cmd := exec.Command("ffmpeg", "-v", "error", "-nostdin", "-i", video, "-vf", vf, "-fps_mode", "passthrough",
		"-f", "rawvideo", "-pix_fmt", "rgb24", "-")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ffmpeg %s: %v: %s", video, err, errb.String())
	}
	size := 3 * w * h
	if out.Len() != size*len(indices) {
		return nil, fmt.Errorf("ffmpeg %s: got %d bytes, want %d frames of %d", video, out.Len(), len(indices), size)
	}
	frames := make([]*rgb.Image, len(indices))
	for i := range frames {
		frames[i] = &rgb.Image{W: w, H: h, Stride: 3 * w, Pix: out.Bytes()[i*size : (i+1)*size]}
	}
	return frames, nil
}
