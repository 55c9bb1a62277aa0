package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/sweep"
)

// runFrames: framesweep frames VIDEO --indices 0,5,99 --out DIR [--size WxH | --preset NAME] [decode
// flags], framesweep frames VIDEO --loader NAME --frames N … --out DIR (frames_loader.go), or
// framesweep frames --record RUN ITEM CONFIG --out DIR (frames_record.go).
func runFrames(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("frames", stderr)
	idxFlag := fs.String("indices", "", "comma-separated frame indices (required)")
	out := fs.String("out", "", "output directory (required)")
	dec := addDecodeFlags(fs, dAll)
	rf := addResizeFlags(fs) // --size, --kernel, --preset (frames_resize.go)
	lf := addLoaderFlags(fs) // --loader and its request (frames_loader.go)
	recordRun := fs.String("record", "", "RUN: rebuild the input of the RUN's record of ITEM CONFIG (positional) and check its input_sha256")
	videoRoot := fs.String("video-root", "", "with --record: the directory the record's relative video names are under (default: run.json's video_root)")
	records := fs.String("records", "", "with --record RUN: rebuild every record a JSON-lines FILE names (item_id, config: the RUN's records.jsonl as it is; - for stdin) in this one process, each into its own subdirectory of --out")
	maxMem := fs.Int64("max-memory-mb", sweep.DefaultRebuildBytes>>20, "with --record: refuse, before decoding, a record whose input takes more memory than this (MiB)")
	force := fs.Bool("force", false, "write into an --out that holds files this run does not write (they stay; the JSON lists them as others)")
	addJSON(fs, true)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep frames VIDEO --indices 0,5,99 --out DIR [--force] [--size WxH | --preset NAME] [--kernel K] [--stream N] [--on-damaged fail|keep] [--no-autorotate] [--hwaccel none|cuda|vaapi|auto] [--worker]")
		fmt.Fprintln(stderr, "       framesweep frames VIDEO --loader NAME [--frames N | --sample-fps F] --out DIR [--force] [--force-last] [--min-frames N] [--max-frames N] [--torch T] [--image-patch-size 14|16] [--min-pixels P] [--max-pixels P] [--total-pixels P]")
		fmt.Fprintln(stderr, "       framesweep frames --record RUN ITEM CONFIG --out DIR [--force] [--video-root DIR] [--max-memory-mb N]")
		fmt.Fprintln(stderr, "       framesweep frames --record RUN --records FILE --out DIR [--force] [--video-root DIR] [--max-memory-mb N]")
		printFlags(fs)
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	dest := extract.Out{Dir: *out, Force: *force}
	if *recordRun != "" || set["video-root"] || set["records"] {
		return framesRecordArgs(recordArgs{run: *recordRun, pos: pos, out: dest, videoRoot: *videoRoot, maxBytes: *maxMem << 20, records: *records}, set, stdout, stderr)
	}
	switch {
	case set["max-memory-mb"]:
		return usageErr(stderr, "frames", "--max-memory-mb applies with --record (the record decides the frames)")
	case len(pos) != 1:
		return usageErr(stderr, "frames", "want exactly one VIDEO, got %d arguments", len(pos))
	case *out == "":
		return usageErr(stderr, "frames", "--out DIR is required")
	}
	if *lf.name != "" {
		for _, f := range append([]string{"indices", "size", "preset", "kernel"}, dec.given(set)) {
			if set[f] {
				return usageErr(stderr, "frames", "--%s does not apply with --loader (the loader's reader picks, decodes and converts the frames)", f)
			}
		}
		return runFramesLoader(pos[0], dest, lf, stdout, stderr)
	}
	for _, f := range []string{"frames", "sample-fps", "force-last", "min-frames", "max-frames", "torch", "image-patch-size", "min-pixels", "max-pixels", "total-pixels"} {
		if set[f] {
			return usageErr(stderr, "frames", "--%s needs --loader NAME (without it, give --indices)", f)
		}
	}
	indices, err := parseIndices(*idxFlag)
	if err != nil {
		return usageErr(stderr, "frames", "--indices: %v", err)
	}
	o, err := dec.d.Options()
	if err != nil {
		return usageErr(stderr, "frames", "%v", err)
	}
	g, kernel, err := rf.geometry()
	if err != nil {
		return usageErr(stderr, "frames", "%v", err)
	}
	o.Kernel = kernel
	res, err := extract.Frames(context.Background(), pos[0], indices, g, o, dest)
	if err != nil {
		if res != nil && len(res.Written) > 0 {
			_ = writeJSON(stdout, res)
		}
		return failErr(stderr, "frames", err)
	}
	if err := writeJSON(stdout, res); err != nil {
		return failErr(stderr, "frames", err)
	}
	return exitOK
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
