package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/framesweep/framesweep/audit/importers"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

func runImport(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("import", stderr)
	config := fs.String("config", "", "config id of every imported record (required)")
	frames := fs.Int("frames", 0, fmt.Sprintf("frames fed per item under this config, 1..%d (VLMEvalKit: default from a {N}frame file name)", sampler.MaxBudget))
	textOnly := fs.Bool("text-only", false, "the config fed no visual input (cost 0)")
	width := fs.Int("width", 0, fmt.Sprintf("frame width in pixels, 1..%d", geom.MaxSide))
	height := fs.Int("height", 0, fmt.Sprintf("frame height in pixels, 1..%d", geom.MaxSide))
	policy := fs.String("policy", "", "sampling policy of the config (uniform, random, …)")
	task := fs.String("task", "", "lmms-eval task or VLMEvalKit dataset name (default: from the file name)")
	itemID := fs.String("item-id", "doc", "lmms-eval item key: doc (<task>:<doc_id>) or question (question_id)")
	openEnded := fs.Bool("open-ended", false, "score answers with Token-F1 against the target instead of exact match (with --correct-from: the field is a score in [0,1])")
	correctFrom := fs.String("correct-from", "", "verdict field of a payload the importer does not know: a dotted path (lmms-eval) or a column (VLMEvalKit) holding true/false or 1/0")
	predField := fs.String("pred-field", "", "with --answer-field: score a payload the importer does not know by exact match of these two fields")
	answerField := fs.String("answer-field", "", "the gold answer field for --pred-field")
	rescoreMode := fs.String("rescore", "", "text: replace the harness's verdicts with option letter/option text matching here (reports how many changed)")
	noCheck := fs.Bool("no-check", false, "do not compare with the harness's own results file beside FILE")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep import lmms-eval|vlmevalkit FILE --config ID [--frames N] [--text-only] [--width W --height H] [--policy P]\n"+
			"       [--task T] [--item-id doc|question] [--correct-from FIELD | --pred-field F --answer-field F] [--rescore text] [--open-ended] [--no-check]")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) != 2 {
		return usageErr(stderr, "import", "need a format (lmms-eval or vlmevalkit) and one FILE")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	kind, path := pos[0], pos[1]
	read := map[string]func(io.Reader, string, importers.Options) (*importers.Result, error){
		"lmms-eval": importers.LmmsEval, "vlmevalkit": importers.VLMEvalKit,
	}[kind]
	switch {
	case read == nil:
		return usageErr(stderr, "import", "unknown format %q (lmms-eval or vlmevalkit)", kind)
	case *config == "":
		return usageErr(stderr, "import", "--config is required")
	case set["width"] != set["height"]:
		return usageErr(stderr, "import", "--width and --height go together")
	case set["width"] && (*width < 1 || *width > geom.MaxSide || *height < 1 || *height > geom.MaxSide):
		return usageErr(stderr, "import", "--width %d --height %d: want sides in 1..%d", *width, *height, geom.MaxSide)
	case *textOnly && set["frames"] && *frames != 0:
		return usageErr(stderr, "import", "--text-only with --frames %d", *frames)
	case !*textOnly && set["frames"] && (*frames < 1 || *frames > sampler.MaxBudget):
		return usageErr(stderr, "import", "--frames %d: want 1..%d frames (--text-only for none)", *frames, sampler.MaxBudget)
	case *itemID != "doc" && *itemID != "question":
		return usageErr(stderr, "import", "--item-id is doc or question")
	case (*predField == "") != (*answerField == ""):
		return usageErr(stderr, "import", "--pred-field and --answer-field go together")
	case *correctFrom != "" && *predField != "":
		return usageErr(stderr, "import", "--correct-from and --pred-field/--answer-field exclude each other")
	case *rescoreMode != "" && *rescoreMode != importers.RescoreText:
		return usageErr(stderr, "import", "--rescore takes %q", importers.RescoreText)
	case *rescoreMode != "" && *openEnded:
		return usageErr(stderr, "import", "--rescore text is for multiple-choice verdicts, not --open-ended scores")
	case *openEnded && *predField != "":
		return usageErr(stderr, "import", "--open-ended scores the response against the target; map a score with --correct-from")
	}
	haveFrames := set["frames"] // the flag's default is no budget, so -1 or 0 cannot mean "not given"
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "framesweep import: "+format+"\n", a...) }
	if kind == "vlmevalkit" && !haveFrames && !*textOnly {
		if n, ok := importers.VLMEvalKitFrames(path); ok && n <= sampler.MaxBudget {
			*frames, haveFrames = n, true
			say("frames %d from the file name (pass --frames to override)", n)
		}
	}
	meta := &record.ConfigMeta{Policy: *policy}
	if haveFrames { // given, or from the file name
		meta.Frames = frames
	}
	if *textOnly {
		meta.TextOnly = textOnly
	}
	if *width > 0 {
		meta.Width, meta.Height = width, height
	}
	if !haveFrames && !*textOnly && *width == 0 && *policy == "" {
		meta = nil // nothing known about the config
	}
	f, err := os.Open(path)
	if err != nil {
		return failErr(stderr, "import", err)
	}
	defer f.Close()
	res, err := read(f, path, importers.Options{Config: *config, Meta: meta, Task: *task, ItemKey: *itemID, OpenEnded: *openEnded,
		CorrectFrom: *correctFrom, PredField: *predField, AnswerField: *answerField, Rescore: *rescoreMode})
	if err != nil {
		return failErr(stderr, "import", err)
	}
	if err := record.Write(stdout, res.Records); err != nil {
		return failErr(stderr, "import", err)
	}
	say("%d records from %s", len(res.Records), path)
	if a := res.Aggregate; a != nil {
		left := ""
		if a.LeftOut > 0 {
			left = fmt.Sprintf(", %d left out", a.LeftOut)
		}
		say("harness aggregate %s %s %s = %s (%.2f points; %s; %d counted%s) per %s",
			a.Harness, a.Task, a.Metric, fmtRaw(a.Raw), a.Points(), a.Label, a.Counted, left, a.Source)
	}
	for _, n := range res.Notes {
		say("%s", n)
	}
	if res.Rescored != nil {
		say("%s", res.Rescored)
	}
	if !*noCheck {
		rp, data, err := importers.FindReport(kind, path)
		switch {
		case err != nil:
			say("warning: %v", err)
		case rp != "":
			hint := ""
			if *correctFrom != "" {
				hint, _, _ = strings.Cut(*correctFrom, ".")
			}
			rep, err := importers.CheckReport(kind, rp, data, res, hint)
			switch {
			case err != nil:
				say("warning: %v", err)
			case rep.Mismatch:
				say("warning: %s", rep.Message)
			default:
				say("%s", rep.Message)
			}
		}
	}
	return exitOK
}

// fmtRaw prints a harness number the way Python would.
func fmtRaw(v float64) string {
	s := fmt.Sprintf("%.6f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
