package main

import (
	"fmt"
	"io"
	"os"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/importers"
)

func runImport(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("import", stderr)
	config := fs.String("config", "", "config id of every imported record (required)")
	frames := fs.Int("frames", -1, "frames fed per item under this config")
	textOnly := fs.Bool("text-only", false, "the config fed no visual input (cost 0)")
	width := fs.Int("width", 0, "frame width in pixels")
	height := fs.Int("height", 0, "frame height in pixels")
	policy := fs.String("policy", "", "sampling policy of the config (uniform, random, …)")
	task := fs.String("task", "", "lmms-eval task name (default: from the file name)")
	itemID := fs.String("item-id", "doc", "lmms-eval item key: doc (<task>:<doc_id>) or question (question_id)")
	openEnded := fs.Bool("open-ended", false, "score answers with Token-F1 against the target instead of exact match")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep import lmms-eval|vlmevalkit FILE --config ID [--frames N] [--text-only] [--width W --height H] [--policy P]")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) != 2 {
		return usageErr(stderr, "import", "need a format (lmms-eval or vlmevalkit) and one FILE")
	}
	kind, path := pos[0], pos[1]
	read := map[string]func(io.Reader, string, importers.Options) ([]audit.Record, error){
		"lmms-eval": importers.LmmsEval, "vlmevalkit": importers.VLMEvalKit,
	}[kind]
	switch {
	case read == nil:
		return usageErr(stderr, "import", "unknown format %q (lmms-eval or vlmevalkit)", kind)
	case *config == "":
		return usageErr(stderr, "import", "--config is required")
	case (*width == 0) != (*height == 0) || *width < 0 || *height < 0:
		return usageErr(stderr, "import", "--width and --height go together and must be positive")
	case *textOnly && *frames > 0:
		return usageErr(stderr, "import", "--text-only with --frames %d", *frames)
	case *frames < -1:
		return usageErr(stderr, "import", "--frames must not be negative")
	case *itemID != "doc" && *itemID != "question":
		return usageErr(stderr, "import", "--item-id is doc or question")
	}
	meta := &audit.ConfigMeta{Policy: *policy}
	if *frames >= 0 {
		meta.Frames = frames
	}
	if *textOnly {
		meta.TextOnly = textOnly
	}
	if *width > 0 {
		meta.Width, meta.Height = width, height
	}
	if *frames < 0 && !*textOnly && *width == 0 && *policy == "" {
		meta = nil // nothing known about the config
	}
	f, err := os.Open(path)
	if err != nil {
		return failErr(stderr, "import", err)
	}
	defer f.Close()
	recs, err := read(f, path, importers.Options{Config: *config, Meta: meta, Task: *task, ItemKey: *itemID, OpenEnded: *openEnded})
	if err != nil {
		return failErr(stderr, "import", err)
	}
	if err := audit.WriteRecords(stdout, recs); err != nil {
		return failErr(stderr, "import", err)
	}
	fmt.Fprintf(stderr, "framesweep import: %d records from %s\n", len(recs), path)
	return exitOK
}
