package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/framesweep/framesweep/ingest"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/record"
)

const tableUsage = "usage: framesweep ingest table FILE [--wide] [--items ITEMS.jsonl] [--config ID] [--model NAME] [--map FIELD=COLUMN]... [--ignore COLUMN]...\n" +
	"       [--empty unparsed|missing] [--item-id doc|question|COLUMN] [--item-prefix P] [--task T] [--open-ended] [--duration-bins B]\n" +
	"       [--config-meta CONFIG=frames:N[,max_pixels:N][,width:W,height:H][,text_only:true]]... [--config-meta-file TABLE]\n" +
	"       [--frames N] [--text-only] [--size WxH] [--max-pixels N] [--policy P]   (a table of one config, with --config)"

// tableFlags are the flags of `framesweep ingest table` beyond the import flags.
type tableFlags struct {
	wide           bool
	itemsPath      string
	empty          string
	columns        keyMapFlag
	ignoreColumns  listFlag
	configMeta     wholeFlag
	configMetaFile string
}

func (t *tableFlags) register(fs *flag.FlagSet) {
	t.columns = keyMapFlag{}
	fs.BoolVar(&t.wide, "wide", false, "table: one row per item, one column of predicted letters per config")
	fs.StringVar(&t.itemsPath, "items", "", "table: the items file giving the answers (and task, category, duration) of the table's items; a line needs only item_id and answer")
	fs.StringVar(&t.empty, "empty", "unparsed", "table --wide: an empty prediction cell is an answer with no letter (unparsed) or no answer (missing)")
	fs.Var(t.columns, "map", "table: FIELD=COLUMN, the column holding FIELD (item_id, config, correct, prediction, answer, frames, …); repeatable")
	fs.Var(&t.ignoreColumns, "ignore", "table: COLUMN to leave out knowingly; repeatable")
	fs.Var(&t.configMeta, "config-meta", "table: CONFIG=frames:N[,max_pixels:N][,width:W,height:H][,text_only:true], a config's budget where its name and the columns give none (wide tables too); repeatable")
	fs.StringVar(&t.configMetaFile, "config-meta-file", "", "table: a table of configs' budgets (columns config, frames, max_pixels, width, height or size, text_only), as --config-meta")
}

// wholeFlag is a repeatable flag whose values are kept whole (they hold commas).
type wholeFlag []string

func (l *wholeFlag) String() string { return strings.Join(*l, " ") }

func (l *wholeFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// configMetas is what --config-meta and --config-meta-file say, by config id; a usage error ("" when
// none) for a value that does not parse or a config given twice.
func (t *tableFlags) configMetas() (map[string]*record.ConfigMeta, string, error) {
	out := map[string]*record.ConfigMeta{}
	for _, v := range t.configMeta {
		c, m, err := ingest.ParseConfigMeta(v)
		if err != nil {
			return nil, err.Error(), nil
		}
		if out[c] != nil {
			return nil, fmt.Sprintf("--config-meta: config %q twice", c), nil
		}
		out[c] = m
	}
	if t.configMetaFile != "" {
		f, err := os.Open(t.configMetaFile)
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		fromFile, err := ingest.ReadConfigMetaTable(f, t.configMetaFile)
		if err != nil {
			return nil, "", err
		}
		for c, m := range fromFile {
			if out[c] != nil {
				return nil, fmt.Sprintf("config %q is in --config-meta and --config-meta-file %s: give it once", c, t.configMetaFile), nil
			}
			out[c] = m
		}
	}
	if len(out) == 0 {
		return nil, "", nil
	}
	return out, "", nil
}

// onlyTable is the usage error of a table flag given to another format.
func (t *tableFlags) onlyTable(set map[string]bool) string {
	for _, n := range []string{"wide", "items", "empty", "map", "ignore", "config-meta", "config-meta-file"} {
		if set[n] {
			return fmt.Sprintf("--%s is for ingest table", n)
		}
	}
	return ""
}

// runImportTable imports a long or wide per-item table (ingest.Table) to stdout, as command name.
func runImportTable(name, path string, f *importFlags, t *tableFlags, set map[string]bool, stdout, stderr io.Writer) int {
	for _, n := range []string{"correct-from", "pred-field", "answer-field", "rescore"} {
		if set[n] {
			return usageErr(stderr, name, "--%s is for harness logs; map a table's columns with --map FIELD=COLUMN", n)
		}
	}
	if bad := f.check(set, false); bad != "" {
		return usageErr(stderr, name, "%s", bad)
	}
	if t.empty != "unparsed" && t.empty != "missing" {
		return usageErr(stderr, name, "--empty %q: want unparsed or missing", t.empty)
	}
	opt := ingest.TableOptions{Options: f.options(set["frames"]), Wide: t.wide, Map: t.columns, Ignore: t.ignoreColumns, EmptyMissing: t.empty == "missing"}
	switch {
	case opt.Meta != nil && t.wide:
		return usageErr(stderr, name, "a wide table's configs are its columns: give each its budget with --config-meta CONFIG=frames:N[,max_pixels:N] (repeatable) or --config-meta-file TABLE, not --frames, --size, --max-pixels, --text-only or --policy")
	case opt.Meta != nil && f.config == "":
		return usageErr(stderr, name, "--frames, --size, --max-pixels, --text-only and --policy describe the one config a table names with --config; give a table's configs theirs with --config-meta CONFIG=frames:N,… (repeatable)")
	}
	metas, bad, err := t.configMetas()
	switch {
	case bad != "":
		return usageErr(stderr, name, "%s", bad)
	case err != nil:
		return failErr(stderr, name, err)
	}
	opt.ConfigMeta = metas
	if t.itemsPath != "" {
		its, err := items.ReadAnswers(t.itemsPath)
		if err != nil {
			return failErr(stderr, name, err)
		}
		opt.Items = ingest.NewTableItems()
		for _, it := range its.Items {
			opt.Items.Add(ingest.TableItem{ItemID: it.ItemID, Answer: it.Answer, Task: it.Task, Category: it.Category, Duration: it.Duration})
		}
	}
	file, err := os.Open(path)
	if err != nil {
		return failErr(stderr, name, err)
	}
	defer file.Close()
	out := record.NewLineWriter(stdout)
	opt.Emit = out.Write
	res, err := ingest.Table(file, path, opt)
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		return failErr(stderr, name, err)
	}
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "framesweep "+name+": "+format+"\n", a...) }
	say("%d records from %s", res.Imported, path)
	for _, n := range res.Notes {
		say("%s", strings.TrimSpace(n))
	}
	return exitOK
}
