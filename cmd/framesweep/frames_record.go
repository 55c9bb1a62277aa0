package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/framesweep/framesweep/internal/atomicfile"
	"github.com/framesweep/framesweep/internal/npy"
	"github.com/framesweep/framesweep/rgb"
	"github.com/framesweep/framesweep/runs"
	"github.com/framesweep/framesweep/sweep"
)

// recordFramesResult is what `frames --record` prints.
type recordFramesResult struct {
	Run               string   `json:"run"`
	ItemID            string   `json:"item_id"`
	Config            string   `json:"config"`
	Video             string   `json:"video"`        // the file decoded
	RecordVideo       string   `json:"record_video"` // as the record names it
	VideoSHA256       string   `json:"video_sha256"`
	StreamIndex       int      `json:"stream_index"`
	Indices           []int    `json:"indices"`
	Geometry          string   `json:"geometry"`
	Kernel            string   `json:"kernel"`
	Pipeline          string   `json:"pipeline"`
	Width             int      `json:"width"`
	Height            int      `json:"height"`
	Images            int      `json:"images_per_frame"`
	Out               string   `json:"out"`
	Tensor            string   `json:"tensor"`  // the input as one uint8 .npy array, the shape it was fed in
	Written           []string `json:"written"` // one PNG per image, in feeding order
	InputSHA256       string   `json:"input_sha256"`
	RecordInputSHA256 string   `json:"record_input_sha256"`
	Match             bool     `json:"match"`
}

// runFramesRecord: framesweep frames --record RUN ITEM CONFIG --out DIR [--video-root DIR]: the
// record's input rebuilt (sweep.Rebuild), written as PNGs and input.npy, its sha256 compared with the
// record's: exit 1 when they differ.
func runFramesRecord(run string, pos []string, dir, videoRoot string, stdout, stderr io.Writer) int {
	const name = "frames"
	if len(pos) != 2 {
		return usageErr(stderr, name, "--record RUN takes ITEM CONFIG (got %d arguments)", len(pos))
	}
	ctx := context.Background()
	rr, err := runs.Open(ctx, run)
	if err != nil {
		return failErr(stderr, name, err)
	}
	defer rr.Close()
	b, err := sweep.Rebuild(ctx, rr, pos[0], pos[1], videoRoot)
	if err != nil {
		return failErr(stderr, name, err)
	}
	j, rec := b.Object.Result.Job, b.Record
	res := recordFramesResult{Run: run, ItemID: rec.ItemID, Config: rec.Config, Video: b.Video, RecordVideo: rec.Video,
		VideoSHA256: rec.VideoSHA256, StreamIndex: *rec.StreamIndex, Indices: j.Selection.Indices, Geometry: j.Geometry, Kernel: j.Spec.Kernel,
		Pipeline: j.Pipeline, Width: j.Width, Height: j.Height, Images: j.Images, Out: dir, Written: []string{},
		InputSHA256: b.Object.DataSHA256, RecordInputSHA256: rec.InputSHA256, Match: b.Match()}
	if err := writeRecordFrames(&res, b); err != nil {
		return failErr(stderr, name, err)
	}
	if err := writeJSON(stdout, res); err != nil {
		return failErr(stderr, name, err)
	}
	if !res.Match {
		return failErr(stderr, name, fmt.Errorf("%s: item %q config %q: the rebuilt input's sha256 %s differs from the record's %s", run, rec.ItemID, rec.Config, res.InputSHA256, res.RecordInputSHA256))
	}
	return exitOK
}

// writeRecordFrames writes the rebuilt tensor as DIR/input.npy and each image as DIR/NNN-FFFFFF.png
// (feeding position, frame index; tiles add _KK, the thumbnail last).
func writeRecordFrames(res *recordFramesResult, b *sweep.Rebuilt) error {
	j := b.Object.Result.Job
	if err := os.MkdirAll(res.Out, 0o755); err != nil {
		return err
	}
	h, err := npy.Header(string(j.DType), j.Shape())
	if err != nil {
		return err
	}
	res.Tensor = filepath.Join(res.Out, "input.npy")
	if err := atomicfile.Write(res.Tensor, append(h, b.Object.Data...)); err != nil {
		return err
	}
	per := 3 * j.Width * j.Height
	if per*j.Images*j.Frames() != len(b.Object.Data) {
		return errors.New("the rebuilt tensor is not uint8 frames")
	}
	for p, x := range j.Selection.Indices {
		for k := 0; k < j.Images; k++ {
			name := filepath.Join(res.Out, fmt.Sprintf("%03d-%06d.png", p, x))
			if j.Images > 1 {
				name = filepath.Join(res.Out, fmt.Sprintf("%03d-%06d_%02d.png", p, x, k))
			}
			off := (p*j.Images + k) * per
			if err := writePNG(name, &rgb.Image{W: j.Width, H: j.Height, Stride: 3 * j.Width, Pix: b.Object.Data[off : off+per]}); err != nil {
				return err
			}
			res.Written = append(res.Written, name)
		}
	}
	return nil
}

// framesRecordArgs checks `frames --record`'s usage: the record decides the frames, so no flag that
// chooses them applies.
func framesRecordArgs(run string, pos []string, dir, videoRoot string, set map[string]bool, stdout, stderr io.Writer) int {
	switch {
	case run == "":
		return usageErr(stderr, "frames", "--video-root needs --record RUN")
	case dir == "":
		return usageErr(stderr, "frames", "--out DIR is required")
	}
	for f := range set {
		if f != "record" && f != "video-root" && f != "out" {
			return usageErr(stderr, "frames", "--%s does not apply with --record (the record names its frames, geometry, kernel, pipeline and stream)", f)
		}
	}
	return runFramesRecord(run, pos, dir, videoRoot, stdout, stderr)
}
