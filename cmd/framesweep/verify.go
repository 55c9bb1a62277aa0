package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/internal/bucket"
)

// runVerify re-hashes every object of a cache and lists corrupt or missing ones (exit 1 when any).
func runVerify(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("verify", stderr)
	addJSON(fs, true)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) != 1 {
		return usageErr(stderr, "verify", "want exactly one CACHE (a directory or blob URL)")
	}
	loc := pos[0]
	ctx := context.Background()
	if !bucket.IsURL(loc) {
		// Open would create a missing directory, and "mkdir: not a directory" names the wrong cause.
		if st, err := os.Stat(loc); err != nil {
			return failErr(stderr, "verify", fmt.Errorf("%s: %w", loc, err))
		} else if !st.IsDir() {
			return failErr(stderr, "verify", fmt.Errorf("%s: not a directory (a cache is a directory or a blob URL)", loc))
		}
	}
	s, err := cache.Open(ctx, loc)
	if err != nil {
		return failErr(stderr, "verify", err)
	}
	defer s.Close()
	rep, err := s.Verify(ctx)
	if err != nil {
		return failErr(stderr, "verify", err)
	}
	if err := writeJSON(stdout, rep); err != nil {
		return failErr(stderr, "verify", err)
	}
	if !rep.Clean() {
		for _, p := range rep.Problems {
			what := p.Kind + " object"
			if p.Kind == "leftover" {
				what = "leftover"
			}
			fmt.Fprintf(stderr, "framesweep verify: %s: %s: %s\n", p.Path, what, p.Cause)
		}
		return exitError
	}
	return exitOK
}
