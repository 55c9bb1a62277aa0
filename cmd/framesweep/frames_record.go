package main

import (
	"context"
	"fmt"
	"io"

	"github.com/framesweep/framesweep/extract"
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
	pos       []string    // ITEM CONFIG
	out       extract.Out // --out, --force
	videoRoot string
	maxBytes  int64  // --max-memory-mb in bytes
	records   string // --records FILE: a batch (frames_records.go)
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
	rec := b.Record
	res := newRecordResult(a.run, b, a.out.Dir)
	files, err := extract.WriteInput(a.out, b.Object)
	if files != nil {
		res.Tensor, res.Written, res.Others = files.Tensor, files.Written, files.Others
	}
	if err != nil {
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

// newRecordResult is what frames --record says of b, rebuilt from run, written into out.
func newRecordResult(run string, b *sweep.Rebuilt, out string) recordFramesResult {
	j, rec := b.Object.Result.Job, b.Record
	return recordFramesResult{Run: run, ItemID: rec.ItemID, Config: rec.Config, Video: b.Video, RecordVideo: rec.Video,
		VideoSHA256: rec.VideoSHA256, StreamIndex: *rec.StreamIndex, Indices: j.Selection.Indices, Geometry: j.Geometry, Kernel: j.Spec.Kernel,
		Pipeline: j.Pipeline, Width: j.Width, Height: j.Height, Images: j.Images, Out: out, Written: []string{},
		InputSHA256: b.Object.DataSHA256, RecordInputSHA256: rec.InputSHA256, Match: b.Match()}
}

// framesRecordArgs checks `frames --record`'s usage: the record decides the frames, so no flag that
// chooses them applies.
func framesRecordArgs(a recordArgs, set map[string]bool, stdout, stderr io.Writer) int {
	switch {
	case set["records"] && a.records == "":
		return usageErr(stderr, "frames", "--records: want a FILE (- for stdin)")
	case a.run == "" && set["records"]:
		return usageErr(stderr, "frames", "--records needs --record RUN")
	case a.run == "":
		return usageErr(stderr, "frames", "--video-root needs --record RUN")
	case a.out.Dir == "":
		return usageErr(stderr, "frames", "--out DIR is required")
	}
	for f := range set {
		switch f {
		case "record", "records", "video-root", "out", "force", "max-memory-mb", "json":
		default:
			return usageErr(stderr, "frames", "--%s does not apply with --record (the record names its frames, geometry, kernel, pipeline and stream)", f)
		}
	}
	if a.records != "" {
		return runFramesRecords(a, stdout, stderr)
	}
	return runFramesRecord(a, stdout, stderr)
}
