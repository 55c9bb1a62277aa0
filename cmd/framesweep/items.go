package main

import (
	"fmt"
	"io"

	"github.com/framesweep/framesweep/items"
)

// runItems: framesweep items import (videomme|mlvu|mlvu-gen|avsd|csv) FILE --videos DIR --out ITEMS.jsonl [--keep-missing]
func runItems(args []string, stdout, stderr io.Writer) int {
	const name = "items"
	const usage = "usage: framesweep items import (videomme|mlvu|mlvu-gen|avsd|csv) FILE --videos DIR --out ITEMS.jsonl [--keep-missing]\n" +
		"       [--references MULTIREF.json] [--turns last|all] (avsd)"
	fs := newFlags(name, stderr)
	videos := fs.String("videos", "", "directory holding the videos (required)")
	out := fs.String("out", "", "the items file to write (required)")
	keep := fs.Bool("keep-missing", false, "keep the items of videos not found (the sweep records their pairs as errors)")
	refs := fs.String("references", "", "avsd: the test set's multi-reference answers (test_set4DSTC7-AVSD_multiref.json)")
	turns := fs.String("turns", items.AVSDTurnsLast, "avsd: last (each dialog's last turn, as DSTC7 scores) or all (every answered turn)")
	fs.Usage = func() { fmt.Fprintf(fs.Output(), "%s\n\nflags:\n", usage); fs.PrintDefaults() }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) == 0 || pos[0] != "import" {
		return usageErr(stderr, name, "want %q", usage)
	}
	pos = pos[1:]
	switch {
	case len(pos) != 2:
		return usageErr(stderr, name, "want a format and a FILE: %s", usage)
	case pos[0] != "videomme" && pos[0] != "mlvu" && pos[0] != "mlvu-gen" && pos[0] != "avsd" && pos[0] != "csv":
		return usageErr(stderr, name, "format %q: want videomme, mlvu, mlvu-gen, avsd or csv", pos[0])
	case *videos == "" || *out == "":
		return usageErr(stderr, name, "--videos and --out are required")
	case pos[0] != "avsd" && (*refs != "" || *turns != items.AVSDTurnsLast):
		return usageErr(stderr, name, "--references and --turns are for the avsd format")
	case *turns != items.AVSDTurnsLast && *turns != items.AVSDTurnsAll:
		return usageErr(stderr, name, "--turns %q: want last or all", *turns)
	}
	its, res, err := items.Import(pos[1], items.ImportOptions{Format: pos[0], Videos: *videos, KeepMissing: *keep, References: *refs, Turns: *turns})
	if err != nil {
		return failErr(stderr, name, err)
	}
	if err := items.Write(*out, its); err != nil {
		return failErr(stderr, name, err)
	}
	res.Out = *out
	if n := len(res.MissingVideos); n > 0 {
		verb := "left out"
		if *keep {
			verb = "kept"
		}
		fmt.Fprintf(stderr, "framesweep items: %d video(s) not found under %s (first: %s); %d item(s) %s, all listed in missing_videos\n",
			n, *videos, res.MissingVideos[0], res.MissingItems, verb)
	}
	if err := writeJSON(stdout, res); err != nil {
		return failErr(stderr, name, err)
	}
	return exitOK
}
