package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/llm"
)

const itemsUsage = "usage: framesweep items import (videomme|mlvu|mlvu-gen|avsd|csv) FILE --video-dir DIR --out ITEMS.jsonl [--keep-missing]\n" +
	"       [--map FIELD=KEY]... [--ignore KEY]... [--template NAME|none] [--references MULTIREF.json] [--turns last|all] (avsd)"

// keyMapFlag is --map FIELD=KEY, repeatable: the release's key (or column) of a field it names otherwise.
type keyMapFlag map[string]string

func (m keyMapFlag) String() string { return "" }

func (m keyMapFlag) Set(s string) error {
	f, k, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(f) == "" || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%q: want FIELD=KEY", s)
	}
	if _, dup := m[f]; dup {
		return fmt.Errorf("%s mapped twice", f)
	}
	m[f] = k
	return nil
}

// listFlag is a repeatable flag whose values may also be comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			*l = append(*l, x)
		}
	}
	return nil
}

// runItems: framesweep items import (videomme|mlvu|mlvu-gen|avsd|csv) FILE --video-dir DIR --out ITEMS.jsonl [--keep-missing]
func runItems(args []string, stdout, stderr io.Writer) int {
	const name = "items"
	fs := newFlags(name, stderr)
	videos := fs.String("video-dir", "", "directory holding the videos (required)")
	deprecate(fs, "videos", "--video-dir", "video-dir")
	out := fs.String("out", "", "the items file to write (required)")
	keep := fs.Bool("keep-missing", false, "keep the items of videos not found (the sweep records their pairs as errors)")
	keys := keyMapFlag{}
	fs.Var(keys, "map", "FIELD=KEY: the release names FIELD (e.g. options) KEY; repeatable (any other unknown key is an error)")
	var ignore listFlag
	fs.Var(&ignore, "ignore", "KEY: a key or column of the release to leave out knowingly; repeatable")
	refs := fs.String("references", "", "avsd: the test set's multi-reference answers (test_set4DSTC7-AVSD_multiref.json)")
	turns := fs.String("turns", items.AVSDTurnsLast, "avsd: last (each dialog's last turn, as DSTC7 scores) or all (every answered turn)")
	template := fs.String("template", "", "prompt template of the multiple-choice items (default: the benchmark's: videomme, mlvu; none: the sweep's --template decides)")
	addJSON(fs, true)
	fs.Usage = func() { fmt.Fprintf(fs.Output(), "%s\n\nflags:\n", itemsUsage); printFlags(fs) }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) == 0 || pos[0] != "import" {
		return usageErr(stderr, name, "want %q", itemsUsage)
	}
	pos = pos[1:]
	switch {
	case len(pos) != 2:
		return usageErr(stderr, name, "want a format and a FILE: %s", itemsUsage)
	case pos[0] != "videomme" && pos[0] != "mlvu" && pos[0] != "mlvu-gen" && pos[0] != "avsd" && pos[0] != "csv":
		return usageErr(stderr, name, "format %q: want videomme, mlvu, mlvu-gen, avsd or csv", pos[0])
	case *videos == "" || *out == "":
		return usageErr(stderr, name, "--video-dir and --out are required")
	case pos[0] != "avsd" && (*refs != "" || *turns != items.AVSDTurnsLast):
		return usageErr(stderr, name, "--references and --turns are for the avsd format")
	case *turns != items.AVSDTurnsLast && *turns != items.AVSDTurnsAll:
		return usageErr(stderr, name, "--turns %q: want last or all", *turns)
	case *template != "" && *template != items.TemplateNone && !slices.Contains(llm.TemplateIDs, *template):
		return usageErr(stderr, name, "--template %q: want %s or none", *template, strings.Join(llm.TemplateIDs, ", "))
	}
	its, res, err := items.Import(pos[1], items.ImportOptions{Format: pos[0], Videos: *videos, KeepMissing: *keep,
		Map: keys, Ignore: ignore, Templates: llm.TemplateIDs, References: *refs, Turns: *turns, Template: *template})
	if err != nil {
		return failErr(stderr, name, err)
	}
	items.RelativeTo(filepath.Dir(*out), its) // portable: the file names its videos relative to itself
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
