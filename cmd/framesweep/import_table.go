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

const tableUsage = "usage: framesweep import table FILE [--wide] [--items ITEMS.jsonl] [--config ID] [--model NAME] [--map FIELD=COLUMN]... [--ignore COLUMN]...\n" +
	"       [--empty unparsed|missing] [--item-id doc|question|COLUMN] [--item-prefix P] [--task T] [--open-ended] [--duration-bins B]\n" +
	"       [--frames N] [--text-only] [--width W --height H] [--max-pixels N] [--policy P]   (a table of one config, with --config)"

// tableFlags are the flags of `framesweep import table` beyond the import flags.
type tableFlags struct {
	wide          bool
	itemsPath     string
	empty         string
	columns       keyMapFlag
	ignoreColumns listFlag
}

func (t *tableFlags) register(fs *flag.FlagSet) {
	t.columns = keyMapFlag{}
	fs.BoolVar(&t.wide, "wide", false, "table: one row per item, one column of predicted letters per config")
	fs.StringVar(&t.itemsPath, "items", "", "table: the items file giving the answers (and task, category, duration) of the table's items")
	fs.StringVar(&t.empty, "empty", "unparsed", "table --wide: an empty prediction cell is an answer with no letter (unparsed) or no answer (missing)")
	fs.Var(t.columns, "map", "table: FIELD=COLUMN, the column holding FIELD (item_id, config, correct, prediction, answer, frames, …); repeatable")
	fs.Var(&t.ignoreColumns, "ignore", "table: COLUMN to leave out knowingly; repeatable")
}

// onlyTable is the usage error of a table flag given to another format.
func (t *tableFlags) onlyTable(set map[string]bool) string {
	for _, n := range []string{"wide", "items", "empty", "map", "ignore"} {
		if set[n] {
			return fmt.Sprintf("--%s is for import table", n)
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
	if opt.Meta != nil && f.config == "" {
		return usageErr(stderr, name, "--frames, --width/--height, --max-pixels, --text-only and --policy describe the one config a table names with --config")
	}
	if t.itemsPath != "" {
		its, err := items.Read(t.itemsPath)
		if err != nil {
			return failErr(stderr, name, err)
		}
		opt.Items = map[string]ingest.TableItem{}
		for _, it := range its.Items {
			opt.Items[it.ItemID] = ingest.TableItem{Answer: it.Answer, Task: it.Task, Category: it.Category, Duration: it.Duration}
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
