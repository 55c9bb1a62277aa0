package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/framesweep/framesweep/internal/num"
)

// Exit statuses of every subcommand.
const (
	exitOK    = 0
	exitError = 1 // a handled error: one line naming the file and the cause
	exitUsage = 2 // bad usage
)

// synopses are the usage lines of the commands that do not print their own (fs.Usage), as the
// README's command list has them. -h and `framesweep help CMD` print the synopsis and the flags.
var synopses = map[string]string{
	"plan": "framesweep plan (VIDEO | --total-frames N --fps F) (--preset NAME | --policy P) [--frames N] [--sample-fps F] [--sampler-seed S] [--json]\n" +
		"       framesweep plan --grid GRID.yaml (VIDEO | --total-frames N --fps F) [--stream N] [--no-autorotate] [--json]\n" +
		"       framesweep plan VIDEO --loader NAME [--frames N | --sample-fps F] [--resolution R] [--json]\n" +
		"       framesweep plan --list [--json]",
	"extract": "framesweep extract --grid GRID.yaml --videos PATH… --out CACHE [--pipeline raw|cached|both] [--jobs N] [--rehash] [--stream N] [--on-damaged fail|keep] [--no-autorotate] [--worker] [--shard i/N|env] [-v]",
	"verify":  "framesweep verify CACHE",
	"version": "framesweep version [--json]",
}

// newFlags returns a FlagSet for the command name ("probe", "bench grid") that reports errors instead
// of exiting. Its default Usage prints the synopsis and the flags; parseInterleaved decides when
// usage is printed at all (only for -h).
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("framesweep "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		syn, ok := synopses[name]
		if !ok {
			syn = "framesweep " + name + " [flags]"
		}
		fmt.Fprintf(fs.Output(), "usage: %s\n\nflags:\n", syn)
		printFlags(fs)
	}
	return fs
}

// parseInterleaved parses flags that may appear before, between or after positional arguments
// (`probe VIDEO --json` as well as `probe --json VIDEO`); "--" ends flag parsing.
//
// A bad flag or value is one line on the FlagSet's output naming the flag and the problem (the flag
// package would print the whole usage after it); -h prints the usage and returns flag.ErrHelp. The
// error is returned either way, for flagParseStatus.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var wrapped []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		r, ok := flagRange(fs, f.Name)
		f.Value = explained{Value: f.Value, rng: r, ranged: ok}
		wrapped = append(wrapped, f)
	})
	restore := func() {
		for _, f := range wrapped {
			f.Value = f.Value.(explained).Value // PrintDefaults reads the flag types from the values
		}
		fs.SetOutput(out)
		fs.Usage = usage
	}
	pos, err := parseAll(fs, args)
	restore()
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage()
	case err != nil:
		cmd := strings.TrimPrefix(fs.Name(), "framesweep ")
		top, _, _ := strings.Cut(cmd, " ")
		fmt.Fprintf(out, "%s: %v (see framesweep help %s)\n", fs.Name(), err, top)
	}
	return pos, err
}

func parseAll(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// explained wraps a flag's value while parsing so that a refused value says what was wanted (the
// flag package reports only "parse error" for the standard types), and checks a numeric value against
// the flag's range (flagRanges).
type explained struct {
	flag.Value
	rng    num.Range
	ranged bool
}

func (v explained) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (v explained) Set(s string) error {
	err := v.Value.Set(s)
	g, ok := v.Value.(flag.Getter)
	if err == nil && ok && v.ranged {
		return checkValue(v.rng, g.Get())
	}
	if err == nil || !ok {
		return err
	}
	switch g.Get().(type) {
	case int, int64:
		if _, perr := strconv.ParseInt(s, 0, 64); errors.Is(perr, strconv.ErrRange) {
			return errors.New("out of range")
		}
		return errors.New("want an integer")
	case uint, uint64:
		if _, perr := strconv.ParseUint(s, 0, 64); errors.Is(perr, strconv.ErrRange) {
			return errors.New("out of range")
		}
		return errors.New("want a non-negative integer")
	case float64:
		return errors.New("want a number")
	case bool:
		return errors.New("want true or false")
	case time.Duration:
		return errors.New("want a duration such as 90s or 2m")
	}
	return err
}

// usageErr reports bad usage on stderr and returns exit status 2.
func usageErr(stderr io.Writer, cmd, format string, a ...any) int {
	fmt.Fprintf(stderr, "framesweep %s: %s\n", cmd, fmt.Sprintf(format, a...))
	return exitUsage
}

// failErr reports a handled error as one line on stderr and returns exit status 1.
// Errors from packages already name the file; newlines are folded so the message stays one line.
func failErr(stderr io.Writer, cmd string, err error) int {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintf(stderr, "framesweep %s: %s\n", cmd, msg)
	return exitError
}

// flagParseStatus maps a flag parsing error to an exit status (-h is not an error).
func flagParseStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
