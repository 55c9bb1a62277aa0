package main

import (
	"context"
	"fmt"
	"io"

	"github.com/framesweep/framesweep/runs"
)

const mergeUsage = `usage: framesweep merge RUN... --out RUN [--items ITEMS.jsonl] [--chunk-records N]
  RUN: a sweep's run directory or blob URL (s3://bucket/prefix?…, gs://…, azblob://…)`

// runMerge: shard RUNs joined into one (runs.Merge).
func runMerge(args []string, stdout, stderr io.Writer) int {
	const name = "merge"
	fs := newFlags(name, stderr)
	out := fs.String("out", "", "the merged RUN (required): a directory or blob URL that holds no RUN yet")
	chunk := fs.Int("chunk-records", 4096, "records per chunk object when --out is on an object store")
	itemsPath := fs.String("items", "", "the sweep's items file, to count the pairs against (default: the one run.json names)")
	addJSON(fs, true)
	fs.Usage = func() { fmt.Fprintln(stderr, mergeUsage); printFlags(fs) }
	inputs, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	switch {
	case len(inputs) == 0:
		return usageErr(stderr, name, "need at least one RUN to merge")
	case *out == "":
		return usageErr(stderr, name, "--out is required")
	case *chunk < 1:
		return usageErr(stderr, name, "--chunk-records must be ≥ 1")
	}
	sum, err := runs.Merge(context.Background(), runs.MergeOptions{Runs: inputs, Out: *out, ChunkRecords: *chunk, Items: *itemsPath,
		Command: append([]string{"framesweep", name}, args...)})
	if err != nil {
		return failErr(stderr, name, err)
	}
	for _, w := range sum.Warnings {
		fmt.Fprintf(stderr, "framesweep merge: warning: %s\n", w)
	}
	for _, n := range sum.Notes {
		fmt.Fprintf(stderr, "framesweep merge: note: %s\n", n)
	}
	if err := writeJSON(stdout, sum); err != nil {
		return failErr(stderr, name, err)
	}
	return exitOK
}
