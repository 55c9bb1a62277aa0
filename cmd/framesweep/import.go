package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/ingest"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/sampler"
)

// maxImportPixels bounds --max-pixels: one frame of geom.MaxSide × geom.MaxSide.
const maxImportPixels = geom.MaxSide * geom.MaxSide

// importFlags are `framesweep ingest`'s flags.
type importFlags struct {
	config, policy, task, itemID, itemPrefix, correctFrom, predField, answerField, rescore string
	model, durationBins, size                                                              string
	frames, width, height, maxPixels                                                       int
	textOnly, openEnded, noCheck                                                           bool
}

func (f *importFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "config id of every imported record (required; VLMEvalKit: default the budget in the file name, e.g. 16frame)")
	fs.IntVar(&f.frames, "frames", 0, fmt.Sprintf("frames fed per item under this config, 1..%d (VLMEvalKit: default from a {N}frame file name)", sampler.MaxBudget))
	fs.BoolVar(&f.textOnly, "text-only", false, "the config fed no visual input (cost 0)")
	fs.StringVar(&f.size, "size", "", fmt.Sprintf("the size WxH each frame was fed at, each side 1..%d", geom.MaxSide))
	deprecatedVar(fs, &intValue{&f.width}, "width", "--size WxH")
	deprecatedVar(fs, &intValue{&f.height}, "height", "--size WxH")
	fs.IntVar(&f.maxPixels, "max-pixels", 0, fmt.Sprintf("the config's per-frame pixel budget (Qwen max_pixels), 1..%d: without --size it prices the config (frames × max-pixels)", maxImportPixels))
	fs.StringVar(&f.policy, "policy", "", "sampling policy of the config (uniform, random, …)")
	fs.StringVar(&f.task, "task", "", "lmms-eval task or VLMEvalKit dataset name (default: from the file name)")
	fs.StringVar(&f.itemID, "item-id", "doc", "what names an item: doc (lmms-eval <task>:<doc_id>, VLMEvalKit index), question (the benchmark's question_id), or a field (lmms-eval dotted path, e.g. doc_id) or column")
	fs.StringVar(&f.itemPrefix, "item-prefix", "", "put this before every item id (e.g. videomme: to pair VLMEvalKit's 0 with lmms-eval's videomme:0)")
	fs.BoolVar(&f.openEnded, "open-ended", false, "score answers with Token-F1 against the target instead of exact match (with --correct-from: the field is a score in [0,1])")
	fs.StringVar(&f.correctFrom, "correct-from", "", "verdict field of a payload the importer does not know: a dotted path (lmms-eval) or a column (VLMEvalKit) holding true/false or 1/0")
	fs.StringVar(&f.predField, "pred-field", "", "with --answer-field: score a payload the importer does not know by exact match of these two fields")
	fs.StringVar(&f.answerField, "answer-field", "", "the gold answer field for --pred-field")
	fs.StringVar(&f.rescore, "rescore", "", "text: replace the harness's verdicts with option letter/option text matching here (reports how many changed)")
	fs.BoolVar(&f.noCheck, "no-check", false, "do not compare with the harness's own results file beside FILE")
	fs.StringVar(&f.durationBins, "duration-bins", "videomme", "group durations given in seconds (MLVU): videomme (short ≤ 120 s < medium ≤ 900 s < long), none, edges in seconds (120,900), or NAME:EDGE,…,NAME")
	fs.StringVar(&f.model, "model", "", "the model that answered: its name on every record (needed when the records of several models are audited together)")
}

// badBins is the usage error of --duration-bins, "" when it parses.
func badBins(s string) string {
	if _, err := ingest.ParseDurationBins(s); err != nil {
		return err.Error()
	}
	return ""
}

// check reports a usage error in the flags (set: the flags given), "" when there is none; needConfig:
// the format takes its config from --config alone.
func (f *importFlags) check(set map[string]bool, needConfig bool) string {
	switch {
	case f.config == "" && needConfig:
		return "--config is required"
	case set["size"] && (set["width"] || set["height"]):
		return "--size and the old --width/--height exclude each other"
	case set["width"] != set["height"]:
		return "--width and --height go together (give --size WxH)"
	case set["size"] && f.parseSize() != nil:
		return f.parseSize().Error()
	case badBins(f.durationBins) != "":
		return badBins(f.durationBins)
	case set["max-pixels"] && f.textOnly:
		return "--max-pixels with --text-only"
	case f.textOnly && set["frames"] && f.frames != 0:
		return fmt.Sprintf("--text-only with --frames %d", f.frames)
	case !f.textOnly && set["frames"] && f.frames < 1: // the range itself is the flag's (flagRanges)
		return fmt.Sprintf("--frames %d: want 1..%d frames (--text-only for none)", f.frames, sampler.MaxBudget)
	case strings.TrimSpace(f.itemID) == "" || strings.TrimSpace(f.itemID) != f.itemID:
		return fmt.Sprintf("--item-id %q: want doc, question, or a field or column name", f.itemID)
	case strings.ContainsAny(f.itemPrefix, "\n\r"):
		return "--item-prefix: want one line"
	case (f.predField == "") != (f.answerField == ""):
		return "--pred-field and --answer-field go together"
	case f.correctFrom != "" && f.predField != "":
		return "--correct-from and --pred-field/--answer-field exclude each other"
	case f.rescore != "" && f.rescore != ingest.RescoreText:
		return fmt.Sprintf("--rescore takes %q", ingest.RescoreText)
	case f.rescore != "" && f.openEnded:
		return "--rescore text is for multiple-choice verdicts, not --open-ended scores"
	case f.openEnded && f.predField != "":
		return "--open-ended scores the response against the target; map a score with --correct-from"
	case set["model"] && (strings.TrimSpace(f.model) == "" || len(f.model) > record.MaxModelBytes || strings.ContainsAny(f.model, "\n\r")):
		return fmt.Sprintf("--model: want a name of 1..%d bytes on one line", record.MaxModelBytes)
	}
	return ""
}

// parseSize reads --size into the width and height.
func (f *importFlags) parseSize() error {
	w, h, err := geom.ParseWxH(f.size)
	if err != nil {
		return fmt.Errorf("--size %q: want WxH with each side 1..%d", f.size, geom.MaxSide)
	}
	f.width, f.height = w, h
	return nil
}

// intValue is an int flag's value (for the old spellings deprecatedVar registers).
type intValue struct{ p *int }

func (v *intValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.Itoa(*v.p)
}

func (v *intValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return err
	}
	*v.p = int(n)
	return nil
}

func (v *intValue) Get() any { return *v.p }

// options are the importer's options; haveFrames says whether the budget is known (given, or from
// the file name).
func (f *importFlags) options(haveFrames bool) ingest.Options {
	meta := &record.ConfigMeta{Policy: f.policy}
	if haveFrames {
		meta.Frames = &f.frames
	}
	if f.textOnly {
		meta.TextOnly = &f.textOnly
	}
	if f.width > 0 {
		meta.Width, meta.Height = &f.width, &f.height
	}
	if f.maxPixels > 0 {
		meta.MaxPixels = &f.maxPixels
	}
	if !haveFrames && !f.textOnly && f.width == 0 && f.maxPixels == 0 && f.policy == "" {
		meta = nil // nothing known about the config
	}
	bins, _ := ingest.ParseDurationBins(f.durationBins) // checked by check
	return ingest.Options{Durations: bins, Config: f.config, Meta: meta, Task: f.task, ItemKey: f.itemID, ItemPrefix: f.itemPrefix, OpenEnded: f.openEnded,
		CorrectFrom: f.correctFrom, PredField: f.predField, AnswerField: f.answerField, Rescore: f.rescore, Model: f.model}
}

// runIngest is `framesweep ingest`: harness logs and per-item tables → records (`framesweep import`,
// its old name, dispatches here with a deprecation line; `items import` is a benchmark → items).
func runIngest(args []string, stdout, stderr io.Writer) int {
	const name = "ingest"
	fs := newFlags(name, stderr)
	var f importFlags
	f.register(fs)
	var tf tableFlags
	tf.register(fs)
	addJSON(fs, true)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep "+name+" lmms-eval|vlmevalkit FILE --config ID [--frames N] [--text-only] [--size WxH] [--max-pixels N] [--policy P] [--duration-bins B]\n"+
			"       [--task T] [--item-id doc|question|FIELD] [--item-prefix P] [--correct-from FIELD | --pred-field F --answer-field F] [--rescore text] [--open-ended] [--no-check] [--model NAME]")
		fmt.Fprintln(stderr, strings.ReplaceAll(tableUsage, "usage: framesweep ingest", "       framesweep "+name))
		printFlags(fs)
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) != 2 {
		return usageErr(stderr, name, "need a format (lmms-eval, vlmevalkit or table) and one FILE")
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	kind, path := pos[0], pos[1]
	if kind == "table" {
		return runImportTable(name, path, &f, &tf, set, stdout, stderr)
	}
	if bad := tf.onlyTable(set); bad != "" {
		return usageErr(stderr, name, "%s", bad)
	}
	read := map[string]func(io.Reader, string, ingest.Options) (*ingest.Result, error){
		"lmms-eval": ingest.LmmsEval, "vlmevalkit": ingest.VLMEvalKit,
	}[kind]
	if read == nil {
		return usageErr(stderr, name, "unknown format %q (lmms-eval, vlmevalkit or table)", kind)
	}
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "framesweep "+name+": "+format+"\n", a...) }
	if kind == "vlmevalkit" && f.config == "" {
		if b, ok := ingest.VLMEvalKitBudget(path); ok {
			f.config = b // the budget is the config; the split is the dataset without it
			say("config %s from the file name (pass --config to name it)", b)
		}
	}
	if bad := f.check(set, true); bad != "" {
		return usageErr(stderr, name, "%s", bad)
	}
	haveFrames := set["frames"] // the flag's default is no budget, so -1 or 0 cannot mean "not given"
	if kind == "vlmevalkit" && !haveFrames && !f.textOnly {
		if n, ok := ingest.VLMEvalKitFrames(path); ok && n <= sampler.MaxBudget {
			f.frames, haveFrames = n, true
			say("frames %d from the file name (pass --frames to override)", n)
		}
	}
	file, err := os.Open(path)
	if err != nil {
		return failErr(stderr, name, err)
	}
	defer file.Close()
	// The importer emits the records only once it has read and checked the whole file (every record
	// through the validator the audit reads with): a refused import writes nothing. A samples file
	// is read twice rather than held (ingest.Options.Emit).
	out := record.NewLineWriter(stdout)
	opt := f.options(haveFrames)
	opt.Emit = out.Write
	res, err := read(file, path, opt)
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		return failErr(stderr, name, err)
	}
	say("%d records from %s", res.Imported, path)
	reportImport(say, res)
	if !f.noCheck {
		checkImport(say, kind, path, res, f.correctFrom)
	}
	return exitOK
}

// reportImport says what the harness reported for the file, and the importer's notes.
func reportImport(say func(string, ...any), res *ingest.Result) {
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
}

// checkImport compares the import with the harness's own results file beside it, when there is one:
// a difference is a warning (the exit status stays 0).
func checkImport(say func(string, ...any), kind, path string, res *ingest.Result, correctFrom string) {
	rp, data, err := ingest.FindReport(kind, path)
	switch {
	case err != nil:
		say("warning: %v", err)
		return
	case rp == "":
		return
	}
	hint := ""
	if correctFrom != "" {
		hint, _, _ = strings.Cut(correctFrom, ".")
	}
	rep, err := ingest.CheckReport(kind, rp, data, res, hint)
	switch {
	case err != nil:
		say("warning: %v", err)
	case rep.Mismatch:
		say("warning: %s", rep.Message)
	default:
		say("%s", rep.Message)
	}
}

// fmtRaw prints a harness number the way Python would.
func fmtRaw(v float64) string {
	s := fmt.Sprintf("%.6f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
