package main

import (
	"context"
	"errors"
	"fmt"
	"io"

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
	// Others are the files --out held that this run did not write, kept under --force.
	Others []string `json:"others,omitempty"`
}

// recordArgs are `frames --record`'s arguments.
type recordArgs struct {
	run       string
	pos       []string // ITEM CONFIG
	dir       string   // --out
	videoRoot string
	maxBytes  int64 // --max-memory-mb in bytes
	force     bool
}

// runFramesRecord: framesweep frames --record RUN ITEM CONFIG --out DIR [--video-root DIR]
// [--max-memory-mb N] [--force]: the record's input rebuilt (sweep.Rebuild: the record held to what a
// sweep writes and to the memory limit before anything is decoded), written as PNGs and input.npy, its
// sha256 compared with the record's: exit 1 when they differ.
func runFramesRecord(a recordArgs, stdout, stderr io.Writer) int {
	const name = "frames"
	if len(a.pos) != 2 {
		return usageErr(stderr, name, "--record RUN takes ITEM CONFIG (got %d arguments)", len(a.pos))
	}
	ctx := context.Background()
	rr, err := runs.Open(ctx, a.run)
	if err != nil {
		return failErr(stderr, name, err)
	}
	defer rr.Close()
	b, err := sweep.Rebuild(ctx, rr, a.pos[0], a.pos[1], sweep.RebuildOptions{VideoRoot: a.videoRoot, MaxBytes: a.maxBytes})
	if err != nil {
		return failErr(stderr, name, err)
	}
	j, rec := b.Object.Result.Job, b.Record
	res := recordFramesResult{Run: a.run, ItemID: rec.ItemID, Config: rec.Config, Video: b.Video, RecordVideo: rec.Video,
		VideoSHA256: rec.VideoSHA256, StreamIndex: *rec.StreamIndex, Indices: j.Selection.Indices, Geometry: j.Geometry, Kernel: j.Spec.Kernel,
		Pipeline: j.Pipeline, Width: j.Width, Height: j.Height, Images: j.Images, Out: a.dir, Written: []string{},
		InputSHA256: b.Object.DataSHA256, RecordInputSHA256: rec.InputSHA256, Match: b.Match()}
	if err := writeRecordFrames(&res, b, a.force); err != nil {
		if len(res.Written) > 0 {
			_ = writeJSON(stdout, res)
		}
		return failErr(stderr, name, err)
	}
	if err := writeJSON(stdout, res); err != nil {
		return failErr(stderr, name, err)
	}
	if !res.Match {
		return failErr(stderr, name, fmt.Errorf("%s: item %q config %q: the rebuilt input's sha256 %s differs from the record's %s", a.run, rec.ItemID, rec.Config, res.InputSHA256, res.RecordInputSHA256))
	}
	return exitOK
}

// writeRecordFrames writes the rebuilt tensor as DIR/input.npy and each image as DIR/NNN-FFFFFF.png
// (feeding position, frame index; tiles add _KK, the thumbnail last), into an --out claimed first.
func writeRecordFrames(res *recordFramesResult, b *sweep.Rebuilt, force bool) error {
	j := b.Object.Result.Job
	per := 3 * j.Width * j.Height
	if per*j.Images*j.Frames() != len(b.Object.Data) {
		return errors.New("the rebuilt tensor is not uint8 frames")
	}
	h, err := npy.Header(string(j.DType), j.Shape())
	if err != nil {
		return err
	}
	name := func(p, k int) string {
		if j.Images > 1 {
			return fmt.Sprintf("%03d-%06d_%02d.png", p, j.Selection.Indices[p], k)
		}
		return fmt.Sprintf("%03d-%06d.png", p, j.Selection.Indices[p])
	}
	names := []string{"input.npy"}
	for p := range j.Selection.Indices {
		for k := range j.Images {
			names = append(names, name(p, k))
		}
	}
	d, err := openOut(res.Out)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.claim(names, force); err != nil {
		return err
	}
	res.Others = d.otherPaths()
	if res.Tensor, err = d.create("input.npy", func(w io.Writer) error {
		if _, err := w.Write(h); err != nil {
			return err
		}
		_, err := w.Write(b.Object.Data)
		return err
	}); err != nil {
		return err
	}
	for p := range j.Selection.Indices {
		for k := range j.Images {
			off := (p*j.Images + k) * per
			file, err := d.writePNG(name(p, k), &rgb.Image{W: j.Width, H: j.Height, Stride: 3 * j.Width, Pix: b.Object.Data[off : off+per]})
			if err != nil {
				return err
			}
			res.Written = append(res.Written, file)
		}
	}
	return nil
}

// framesRecordArgs checks `frames --record`'s usage: the record decides the frames, so no flag that
// chooses them applies.
func framesRecordArgs(a recordArgs, set map[string]bool, stdout, stderr io.Writer) int {
	switch {
	case a.run == "":
		return usageErr(stderr, "frames", "--video-root needs --record RUN")
	case a.dir == "":
		return usageErr(stderr, "frames", "--out DIR is required")
	}
	for f := range set {
		switch f {
		case "record", "video-root", "out", "force", "max-memory-mb":
		default:
			return usageErr(stderr, "frames", "--%s does not apply with --record (the record names its frames, geometry, kernel, pipeline and stream)", f)
		}
	}
	return runFramesRecord(a, stdout, stderr)
}
