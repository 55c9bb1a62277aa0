package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit statuses of every subcommand.
const (
	exitOK    = 0
	exitError = 1 // a handled error: one line naming the file and the cause
	exitUsage = 2 // bad usage
)

// newFlags returns a FlagSet that reports errors instead of exiting, writing usage to stderr.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("framesweep "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseInterleaved parses flags that may appear before, between or after positional arguments
// (`probe VIDEO --json` as well as `probe --json VIDEO`); "--" ends flag parsing.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
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
