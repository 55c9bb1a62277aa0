package sweep

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/runs"
)

// Options configure a sweep. The CLI fills them from its flags and calls Check, so every rule on
// their values lives here; Run applies the defaults of zero fields first (withDefaults).
type Options struct {
	Grid     *grid.Grid
	GridPath string
	Items    *items.File
	Runtime  llm.Runtime // answers every pair; safe for concurrent use (llm.Runtime's contract)
	Spec     llm.Spec    // the runtime's spec, recorded
	Template string      // prompt template for items that name none ("" = generic)
	Out      string      // the RUN: a directory, or a blob URL (records as chunk objects: package runs)
	// VideoRoot is the directory records name videos relative to ("": the items file's directory, so
	// that a record names its video as the items file does). A RUN begun before roots existed keeps
	// naming videos as the items file resolved them.
	VideoRoot string
	Resume    bool // continue the sweep RUN holds (pairs whose error is transient are asked again)
	// RetryErrors asks every failed pair again on a resume, whatever its error (it needs Resume).
	RetryErrors bool
	Jobs        int // videos in parallel (0 = 1)
	// Concurrency is how many answers are in flight at once per video (0: the spec's own concurrency=N,
	// an openai server's parallelism; else 1, as in-process runtimes serialise anyway).
	Concurrency int
	Cache       *cache.Store // content-addressed inputs, read and written (tee'd); nil = none
	Limit       int          // the first Limit items only (0 = all)
	Shard       Shard        // this machine's videos
	Input       pipeline.Options
	// InputMemory bounds the bytes of built input tensors one video holds in memory to feed the
	// runtime (0: DefaultInputMemory). An input beyond it streams to the store (--cache, or the RUN's
	// scratch store) and is read back when its turn comes.
	InputMemory int64
	// Generation settings of every request: part of the RUN's identity (run.json's decoding, each
	// record's), so a resume refuses others.
	MaxTokens   int
	Temperature float64
	Seed        int64
	// StopGrace is how long the answers in flight may go on after a stop before they are cancelled
	// and left to --resume (0: DefaultStopGrace; < 0: none, cancelled at once).
	StopGrace time.Duration
	Libraries map[string]string // the linked library versions, for run.json (RunLibraries)
	Command   []string
	Log       *slog.Logger // progress and warnings (nil = discard)
	// Progress, when set, is told about every finished pair.
	Progress Progress
	// Cascade, when set, runs the grid's configs as an online confidence cascade (cascade.go).
	Cascade *runs.Cascade
	// ChunkRecords and ChunkInterval: on an object store, a chunk of records is published every
	// ChunkRecords records or once its oldest record has waited ChunkInterval, and at the end
	// (0: runs.DefaultChunkRecords, runs.DefaultChunkInterval). A local RUN ignores them.
	ChunkRecords  int
	ChunkInterval time.Duration
	// StrictTokens makes a pair whose visual tokens the model counted otherwise than its frames make
	// an error record (--strict-tokens); by default the sweep warns once per config and goes on.
	StrictTokens bool
}

// DefaultStopGrace is Options.StopGrace's default: after a stop (SIGINT, SIGTERM), answers in flight
// have 10 s to finish and be recorded; the process then exits.
const DefaultStopGrace = 10 * time.Second

// DefaultInputMemory is Options.InputMemory's default: a video's inputs up to 1 GiB are fed from
// the decoding pass's memory (the example grids' inputs are a few MB; 128 frames at 448² are 77 MB).
const DefaultInputMemory = 1 << 30

// ErrOptions marks options that do not describe a sweep (the CLI's usage errors): errors.Is(err,
// ErrOptions) holds for every *OptionsError.
var ErrOptions = errors.New("bad sweep options")

// OptionsError is an option that does not describe a sweep; its message names the CLI flag.
type OptionsError struct{ Msg string }

func (e *OptionsError) Error() string        { return e.Msg }
func (e *OptionsError) Is(target error) bool { return target == ErrOptions }

func optErr(format string, a ...any) error { return &OptionsError{Msg: fmt.Sprintf(format, a...)} }

// Check reports the first option whose value does not describe a sweep (ErrOptions, naming the CLI
// flag). It reads no file: the grid and items may still be unloaded.
func (o *Options) Check() error {
	switch {
	case o.Out == "":
		return optErr("--out is required")
	case o.Jobs < 1:
		return optErr("--jobs must be ≥ 1")
	case o.Concurrency < 0:
		return optErr("concurrency must be ≥ 1")
	case o.Limit < 0:
		return optErr("--limit must be ≥ 0")
	case o.InputMemory < 0:
		return optErr("input memory must be ≥ 0")
	case o.ChunkRecords < 1 || o.ChunkInterval <= 0:
		return optErr("--chunk-records must be ≥ 1 and --chunk-interval > 0")
	case o.RetryErrors && !o.Resume:
		return optErr("--retry-errors needs --resume (it asks a RUN's failed pairs again)")
	}
	// The decoding settings are checked here, not per request: a bad one would fail every pair alike.
	if err := num.In(0, llm.MaxMaxTokens).Int("--max-tokens", int64(o.MaxTokens)); err != nil {
		return optErr("%v", err)
	}
	if err := num.In(0, llm.MaxTemperature).Float("--temperature", o.Temperature); err != nil {
		return optErr("%v", err)
	}
	if _, err := llm.TemplateByID(o.Template); err != nil {
		return optErr("--template: %v", err)
	}
	if err := o.Input.Check(); err != nil {
		return err
	}
	if o.Cascade != nil {
		return checkCascade(o.Cascade)
	}
	return nil
}

// checkTemplates refuses an items file whose item names a prompt template no runtime renders: every
// pair of it would fail alike, so the sweep does not start.
func checkTemplates(f *items.File) error {
	for i := range f.Items {
		if t := f.Items[i].Template; t != "" {
			if _, err := llm.TemplateByID(t); err != nil {
				return fmt.Errorf("%s: item %q: template %q is none the sweep knows (%s)", f.Path, f.Items[i].ItemID, t, strings.Join(llm.TemplateIDs, ", "))
			}
		}
	}
	return nil
}

// withDefaults fills the zero fields Run accepts: one video at a time, answers as many at a time as
// the runtime takes (llm.Concurrent: an openai client's concurrency=, default 4; else the spec's
// concurrency=N, else 1), the generic template, the default stop grace, chunking and memory, the
// grid's stream.
func (o *Options) withDefaults() {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Jobs == 0 {
		o.Jobs = 1
	}
	if o.Concurrency == 0 {
		o.Concurrency = SpecConcurrency(o.Spec)
		if c, ok := o.Runtime.(llm.Concurrent); ok && c.Concurrency() > 0 {
			o.Concurrency = c.Concurrency() // an openai client's concurrency= or its default 4
		}
	}
	if o.StopGrace == 0 {
		o.StopGrace = DefaultStopGrace
	}
	if o.Template == "" {
		o.Template = llm.TemplateGeneric
	}
	if o.ChunkRecords == 0 {
		o.ChunkRecords = runs.DefaultChunkRecords
	}
	if o.ChunkInterval == 0 {
		o.ChunkInterval = runs.DefaultChunkInterval
	}
	if o.InputMemory == 0 {
		o.InputMemory = DefaultInputMemory
	}
	if o.VideoRoot == "" && o.Items != nil {
		o.VideoRoot = filepath.Dir(o.Items.Path)
	}
	if o.Input.Stream == nil && o.Grid != nil {
		o.Input.Stream = o.Grid.Spec.Stream // the grid's stream: key, unless the options name one
	}
}

// SpecConcurrency is the answers a runtime spec may have in flight: its concurrency=N (an OpenAI-
// compatible server's own parallelism), else 1.
func SpecConcurrency(sp llm.Spec) int {
	if n, err := strconv.Atoi(sp.Params["concurrency"]); err == nil && n > 0 {
		return n
	}
	return 1
}

// RunLibraries keeps of the linked library versions those that decide a sweep's inputs and answers
// with runtime engine: the decoding and resizing libraries, and only the engine's own runtime library.
func RunLibraries(all map[string]string, engine string) map[string]string {
	out := make(map[string]string, len(all))
	for lib, v := range all {
		if owner, ok := runtimeLibraries[lib]; ok && owner != engine {
			continue
		}
		out[lib] = v
	}
	return out
}

// runtimeLibraries are the libraries only one runtime engine uses.
var runtimeLibraries = map[string]string{"llama_cpp": "llamacpp", "llama_cpp_backends": "llamacpp", "onnxruntime": "onnx"}
