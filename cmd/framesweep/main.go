// Command framesweep is the CLI of the framesweep engine: every subcommand is a thin shell over a package.
//
// Conventions (DESIGN.md "Stable surface"): JSON on stdout, logs on stderr, exit status 0 on success,
// 1 on a handled error (one line naming the file and the cause), 2 on bad usage.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/framesweep/framesweep/extract"
)

// command is one subcommand. run returns the process exit status. A hidden command is not listed by
// help: the internal worker, and old names kept for one release (deprecated: the name to use).
type command struct {
	summary    string
	run        func(args []string, stdout, stderr io.Writer) int
	hidden     bool
	deprecated string
}

// commands is the explicit table of subcommands (no init-time registration).
var commands = map[string]command{
	// frames (decode/, sampler/, resize/)
	"probe":  {summary: "describe a video: codec, size, frame count from a demux scan, fps, rotation", run: runProbe},
	"plan":   {summary: "frame indices of a preset or policy for a video, or of every config of a grid (what extract builds)", run: runPlan},
	"frames": {summary: "extract frames by index as RGB PNGs (DIR/000005.png)", run: runFrames},
	"worker": {summary: "internal: run one supervised decode job (JSON on stdin/stdout)", run: runWorker, hidden: true},

	// model inputs (extract/, cache/)
	"extract": {summary: "decode each video once and write every grid config's input tensors to a cache", run: runExtract},
	"verify":  {summary: "re-hash every object of a cache; list corrupt or missing ones", run: runVerify},
	"serve":   {summary: "HTTP API: exact frames of any grid configuration for other tools (docs/serve.md)", run: runServe},

	// model runtimes (llm/)
	"ask":       {summary: "ask one multiple-choice question about a video (or text-only) through a model runtime", run: runAsk},
	"testmodel": {summary: "write a tiny random-weight GGUF + mmproj for tests and the demo (answers are noise)", run: runTestModel},

	// the study (sweep/, items/)
	"items": {summary: "items import (videomme|mlvu|mlvu-gen|avsd|csv): a benchmark release → the items a sweep asks (ITEMS.jsonl)", run: runItems},
	"sweep": {summary: "every item under every grid config through a model runtime: resumable records in RUN", run: runSweep},
	"merge": {summary: "join shard RUNs (directories or object stores) into one RUN: duplicates dropped, conflicts refused", run: runMerge},

	// analysis (audit/)
	"audit":   {summary: "item-level scaling audit of records: metrics, flows, cascade, interventions; --json/--html/--md", run: runAudit},
	"cascade": {summary: "confidence cascade over a budget ladder: τ sweep, shared frame cost, cross-fitted folds", run: runCascade},

	// other harnesses' results (ingest/)
	"ingest": {summary: "harness logs → records: lmms-eval logs, VLMEvalKit predictions or a study's per-item table (ingest table), JSONL on stdout", run: runIngest},
	"import": {run: runIngest, hidden: true, deprecated: "ingest"},

	"bench":   {summary: "benchmarks as ratios against baselines in the same run: grid, decode, memory, resize, peers", run: runBench},
	"version": {summary: "print the engine and library versions", run: runVersion},
	"doctor":  {summary: "GPU preflight: driver, CUDA runtime and cuBLAS, the llama.cpp CUDA build, NVDEC per codec, devices", run: runDoctor},
}

func main() {
	os.Exit(leakExit(dispatch(os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stderr)
		return exitUsage
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1:
		usage(stdout)
		return exitOK
	case args[0] == "help":
		// `framesweep help CMD [MODE]` is `framesweep CMD [MODE] -h`, on stdout: help asked for is output.
		_, c, ok := lookup(args[1])
		if !ok {
			fmt.Fprintf(stderr, "framesweep help: unknown command %q (see framesweep help)\n", args[1])
			return exitUsage
		}
		return c.run(append(args[2:], "-h"), stdout, stdout)
	}
	name, c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "framesweep: unknown command %q (see framesweep help)\n", args[0])
		return exitUsage
	}
	if name != args[0] {
		fmt.Fprintf(stderr, "framesweep: `%s` is deprecated and goes in the next release: use `framesweep %s`\n", args[0], name)
	}
	// FFmpeg's own log lines would break the one-line error on stderr; every command shares this.
	extract.SetCLILogLevel()
	return c.run(args[1:], stdout, stderr)
}

// lookup finds a command by name; an old name gives the command it became, under its new name.
func lookup(name string) (string, command, bool) {
	c, ok := commands[name]
	if ok && c.deprecated != "" {
		return c.deprecated, commands[c.deprecated], true
	}
	return name, c, ok
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: framesweep COMMAND [ARGS]   (framesweep help COMMAND, or COMMAND -h, for its flags)\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}
