package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/runs"
	"github.com/framesweep/framesweep/sweep"
)

// `framesweep frames --record RUN --records FILE --out DIR`: many records of a RUN rebuilt in one
// process (a start costs a few tenths of a CPU-second; the Python client's reproduce_records uses it). Each
// record is held to what `frames --record` holds it to — checked before its video is decoded (its
// indices are its frames, --max-memory-mb) — and written into its own subdirectory of --out
// (extract.InputDir: 000001, 000002, … in FILE's order), whose input.npy is checked against the
// record's input_sha256. A record that fails does not stop the others.

// recordsEntry is one record's outcome in `frames --records`' JSON.
type recordsEntry struct {
	Status string `json:"status"` // match | mismatch | failed | skipped (no input to rebuild: text-only, loader, onnx)
	ItemID string `json:"item_id"`
	Config string `json:"config"`
	Line   int    `json:"line"` // of FILE
	Error  string `json:"error,omitempty"`
	*recordFramesResult
}

// recordsResult is what `frames --records` prints.
type recordsResult struct {
	Run        string         `json:"run"`
	File       string         `json:"records_file"`
	Out        string         `json:"out"`
	Matched    int            `json:"matched"`
	Mismatched int            `json:"mismatched"`
	Failed     int            `json:"failed"`
	Skipped    int            `json:"skipped"`
	Records    []recordsEntry `json:"records"`
	Others     []string       `json:"others,omitempty"` // entries of --out kept under --force
}

// maxRecordLine bounds one line of a records FILE (a record with its answers is a few KiB).
const maxRecordLine = 64 << 20

// readRecordPairs reads FILE's (item_id, config) pairs, one JSON object a line (blank lines skipped).
func readRecordPairs(file string, stdin io.Reader) ([]recordsEntry, error) {
	in := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		in = f
	}
	r := bufio.NewReaderSize(in, 1<<16)
	var out []recordsEntry
	for line := 1; ; line++ {
		b, err := readBoundedLine(r, maxRecordLine)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		if strings.TrimSpace(string(b)) == "" {
			continue
		}
		var key struct {
			ItemID *string `json:"item_id"`
			Config *string `json:"config"`
		}
		if err := json.Unmarshal(b, &key); err != nil || key.ItemID == nil || key.Config == nil || *key.ItemID == "" || *key.Config == "" {
			return nil, fmt.Errorf("%s:%d: want a JSON object with item_id and config (a line of a RUN's records.jsonl)", file, line)
		}
		out = append(out, recordsEntry{ItemID: *key.ItemID, Config: *key.Config, Line: line})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no records (want JSON lines with item_id and config)", file)
	}
	return out, nil
}

// readBoundedLine returns the next line without its newline (io.EOF after the last), refusing one
// longer than max.
func readBoundedLine(r *bufio.Reader, max int) ([]byte, error) {
	var acc []byte
	for {
		chunk, err := r.ReadSlice('\n')
		acc = append(acc, chunk...)
		if len(acc) > max {
			return nil, fmt.Errorf("a line longer than %d bytes", max)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(acc) == 0:
			return nil, io.EOF
		case err != nil && err != io.EOF:
			return nil, err
		}
		return []byte(strings.TrimSuffix(string(acc), "\n")), nil
	}
}

// runFramesRecords rebuilds every record FILE names; exit 1 when one failed or differs from its
// record (each said on a line of its own), the JSON listing them all either way.
func runFramesRecords(a recordArgs, stdout, stderr io.Writer) int {
	const name = "frames"
	if len(a.pos) != 0 {
		return usageErr(stderr, name, "--records FILE names the records: no ITEM CONFIG (got %d arguments)", len(a.pos))
	}
	entries, err := readRecordPairs(a.records, os.Stdin)
	if err != nil {
		return failErr(stderr, name, err)
	}
	ctx := context.Background()
	rr, err := runs.Open(ctx, a.run)
	if err != nil {
		return failErr(stderr, name, err)
	}
	defer rr.Close()
	out, err := extract.OpenInputs(a.out, len(entries))
	if err != nil {
		return failErr(stderr, name, err)
	}
	defer out.Close()
	res := recordsResult{Run: a.run, File: a.records, Out: a.out.Dir, Records: entries, Others: out.Others()}
	for i := range res.Records {
		e := &res.Records[i]
		rebuildOne(ctx, rr, a, out, i+1, e)
		switch e.Status {
		case "match":
			res.Matched++
		case "mismatch":
			res.Mismatched++
		case "skipped":
			res.Skipped++
		default:
			res.Failed++
		}
	}
	if err := writeJSON(stdout, res); err != nil {
		return failErr(stderr, name, err)
	}
	code := exitOK
	for _, e := range res.Records {
		if e.Status == "failed" || e.Status == "mismatch" {
			code = failErr(stderr, name, errors.New(e.Error))
		}
	}
	return code
}

// rebuildOne rebuilds record i (from 1) of the batch into its subdirectory and says how it went in e.
func rebuildOne(ctx context.Context, rr *runs.Reader, a recordArgs, out *extract.Inputs, i int, e *recordsEntry) {
	b, err := sweep.Rebuild(ctx, rr, e.ItemID, e.Config, sweep.RebuildOptions{VideoRoot: a.videoRoot, MaxBytes: a.maxBytes})
	switch {
	case errors.Is(err, sweep.ErrNoInput):
		e.Status, e.Error = "skipped", err.Error()
		return
	case err != nil:
		e.Status, e.Error = "failed", oneLine(err)
		return
	}
	dir, files, err := out.Write(i, b.Object)
	r := newRecordResult(a.run, b, dir)
	e.recordFramesResult = &r
	if files != nil {
		r.Tensor, r.Written = files.Tensor, files.Written
	}
	switch {
	case err != nil:
		e.Status, e.Error = "failed", oneLine(err)
	case !r.Match:
		e.Status = "mismatch"
		e.Error = fmt.Sprintf("%s: item %q config %q: the rebuilt input's sha256 %s differs from the record's %s", a.run, e.ItemID, e.Config, r.InputSHA256, r.RecordInputSHA256)
	default:
		e.Status = "match"
	}
}
