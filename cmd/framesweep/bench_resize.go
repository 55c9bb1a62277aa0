package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/framesweep/framesweep/bench"
)

// setupBenchResize is `framesweep bench resize`: native Pillow-exact bicubic per dispatch level against
// Pillow 9.4 (in /usr/bin/python3) and OpenCV INTER_CUBIC in the same run (bench/resize.go).
func setupBenchResize(fs *flag.FlagSet, stderr io.Writer) func(ctx context.Context) ([]bench.Row, error) {
	reps := fs.Int("reps", 30, "measured repetitions per row")
	warmup := fs.Int("warmup", 3, "unmeasured runs first")
	workers := fs.Int("workers", 0, "goroutines of the banded native row (0: GOMAXPROCS)")
	return func(ctx context.Context) ([]bench.Row, error) {
		if *reps < 1 || *reps > 100000 || *warmup < 0 || *workers < 0 {
			return nil, fmt.Errorf("bench resize: --reps must be 1..100000, --warmup and --workers ≥ 0")
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return bench.Resize(bench.ResizeOptions{Reps: *reps, Warmup: *warmup, Workers: *workers})
	}
}
