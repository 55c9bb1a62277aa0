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

	"github.com/framesweep/framesweep/decode"
)

// command is one subcommand. run returns the process exit status.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands is the explicit table of subcommands (no init-time registration).
var commands = map[string]command{
	// frames (decode/, sampler/, resize/)
	"probe":  {"describe a video: codec, size, frame count from a demux scan, fps, rotation", runProbe},
	"plan":   {"frame indices of a preset or policy for a video, or of every config of a grid", runPlan},
	"frames": {"extract frames by index as RGB PNGs (DIR/000005.png)", runFrames},
	"worker": {"internal: run one supervised decode job (JSON on stdin/stdout)", runWorker},

	// model inputs (cache/)
	"extract": {"decode each video once and write every grid config's input tensors to a cache", runExtract},
	"verify":  {"re-hash every object of a cache; list corrupt or missing ones", runVerify},
	"serve":   {"HTTP API: exact frames of any grid configuration for other tools (docs/serve.md)", runServe},

	// model runtimes (llm/)
	"ask":       {"ask one multiple-choice question about a video (or text-only) through a model runtime", runAsk},
	"testmodel": {"write a tiny random-weight GGUF + mmproj for tests and the demo (answers are noise)", runTestModel},

	// the study (sweep/, items/)
	"items": {"items import (videomme|mlvu|mlvu-gen|avsd|csv): a benchmark release → the items a sweep asks (ITEMS.jsonl); not `import`", runItems},
	"sweep": {"every item under every grid config through a model runtime: resumable records in RUN", runSweep},
	"merge": {"join shard RUNs (directories or object stores) into one RUN: duplicates dropped, conflicts refused", runMerge},

	// analysis (audit/)
	"audit":   {"item-level scaling audit of records: metrics, flows, cascade, interventions; --json/--html/--md", runAudit},
	"cascade": {"confidence cascade over budgets: τ sweep, shared frame cost, cross-fitted folds", runCascade},

	// other harnesses' results (ingest/)
	"import": {"harness logs → records: lmms-eval logs, VLMEvalKit predictions or a study's per-item table (import table) to canonical records (JSONL on stdout); also `ingest`", runImport},
	"ingest": {"the same command as `import`, under a name apart from `items import`: harness logs and per-item tables → records", runIngest},

	"bench":   {"benchmarks as ratios against baselines in the same run: grid, decode, memory, resize, peers", runBench},
	"version": {"print the engine and library versions", runVersion},
	"doctor":  {"GPU preflight: driver, CUDA runtime and cuBLAS, the llama.cpp CUDA build, NVDEC per codec, devices", runDoctor},
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
		c, ok := commands[args[1]]
		if !ok {
			fmt.Fprintf(stderr, "framesweep help: unknown command %q (see framesweep help)\n", args[1])
			return exitUsage
		}
		return c.run(append(args[2:], "-h"), stdout, stdout)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "framesweep: unknown command %q (see framesweep help)\n", args[0])
		return exitUsage
	}
	// FFmpeg's own log lines would break the one-line error on stderr; every command shares this.
	decode.SetLogLevel(decode.CLILogLevel())
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: framesweep COMMAND [ARGS]   (framesweep help COMMAND, or COMMAND -h, for its flags)\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}
