package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/sweep"
)

// readRecordInputs reads the positionals of audit and cascade: records files and run directories as
// audit.ReadPaths reads them, and RUNs that only the sweep's reader knows: a RUN on an object store
// (a blob URL), or a directory holding chunk objects under records/ (a RUN copied from one).
func readRecordInputs(pos []string) ([]record.Record, error) {
	ctx := context.Background()
	var all []record.Record
	var plain []string
	flush := func() error {
		if len(plain) == 0 {
			return nil
		}
		recs, err := record.ReadPaths(plain)
		all, plain = append(all, recs...), nil
		return err
	}
	for _, p := range pos {
		if !sweepReads(p) {
			plain = append(plain, p)
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
		recs, err := readRunRecords(ctx, p)
		if err != nil {
			return nil, err
		}
		all = append(all, recs...)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return all, nil
}

func sweepReads(p string) bool {
	if cache.IsURL(p) {
		return true
	}
	st, err := os.Stat(filepath.Join(p, "records"))
	return err == nil && st.IsDir()
}

// readRunRecords reads every record of a RUN: records.jsonl, then the chunks.
func readRunRecords(ctx context.Context, loc string) ([]record.Record, error) {
	rr, err := sweep.OpenRun(ctx, loc)
	if err != nil {
		return nil, err
	}
	defer rr.Close()
	srcs, err := rr.Sources(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	var out []record.Record
	for _, s := range srcs {
		rc, err := rr.Open(ctx, s)
		if err != nil {
			return nil, err
		}
		recs, err := record.Read(rc, rr.Where(s))
		rc.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: the RUN holds no records", loc)
	}
	return out, nil
}
