package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/framesweep/framesweep/extract"
)

// The CLI's vocabulary: one flag group per concern, the same names and meanings in every command
// (README "Commands"). A renamed flag keeps its old spelling for one release as a hidden alias that
// says so on stderr (deprecate).

// hidden are the flags of each FlagSet that help does not list (old spellings), by name: their
// replacement.
var (
	hiddenMu sync.Mutex
	hidden   = map[*flag.FlagSet]map[string]string{}
)

func hiddenOf(fs *flag.FlagSet) map[string]string {
	hiddenMu.Lock()
	defer hiddenMu.Unlock()
	return hidden[fs]
}

// deprecate registers old as a hidden spelling of the flags targets (the new names, registered
// before): each use prints one line on stderr naming the new spelling, then sets every target to the
// value, as the command line would (fs.Set: ranges checked, the targets counted as given). The
// usage line names repl, the new spelling to write.
func deprecate(fs *flag.FlagSet, old, repl string, targets ...string) {
	first := fs.Lookup(targets[0])
	_, isBool := first.Value.(interface{ IsBoolFlag() bool })
	fs.Var(&aliasValue{fs: fs, name: fs.Name(), old: old, repl: repl, targets: targets, isBool: isBool, out: fs.Output()}, old, "deprecated: "+repl)
	hiddenMu.Lock()
	defer hiddenMu.Unlock()
	if hidden[fs] == nil {
		hidden[fs] = map[string]string{}
	}
	hidden[fs][old] = repl
}

// aliasValue is an old spelling: setting it sets its targets.
type aliasValue struct {
	fs        *flag.FlagSet
	name      string
	old, repl string
	targets   []string
	isBool    bool
	out       io.Writer // stderr (parsing swaps the FlagSet's output)
}

func (a *aliasValue) String() string { return "" }

func (a *aliasValue) IsBoolFlag() bool { return a.isBool }

func (a *aliasValue) Set(s string) error {
	fmt.Fprintf(a.out, "%s: --%s is deprecated and goes in the next release: use %s\n", a.name, a.old, a.repl)
	for _, t := range a.targets {
		if err := a.fs.Set(t, s); err != nil {
			return fmt.Errorf("(--%s) %w", t, err)
		}
	}
	return nil
}

// Get is the first target's value, so a range check reads it.
func (a *aliasValue) Get() any {
	if g, ok := a.fs.Lookup(a.targets[0]).Value.(flag.Getter); ok {
		return g.Get()
	}
	return nil
}

// printFlags is fs.PrintDefaults without the hidden spellings.
func printFlags(fs *flag.FlagSet) {
	hide := hiddenOf(fs)
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(fs.Output())
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := hide[f.Name]; ok {
			return
		}
		shown.Var(f.Value, f.Name, f.Usage)
		shown.Lookup(f.Name).DefValue = f.DefValue
	})
	shown.PrintDefaults()
}

// addJSON is --json: JSON on stdout instead of the text report. A command whose output is always
// JSON (data for other tools) accepts it too: always says so.
func addJSON(fs *flag.FlagSet, always bool) *bool {
	if always {
		return fs.Bool("json", false, "accepted for uniformity: this command always prints JSON")
	}
	return fs.Bool("json", false, "print JSON instead of text")
}

// Members of the decode flag group: a command registers those its decoding honours.
type decodeFlag uint8

const (
	dStream    decodeFlag = 1 << iota // --stream N
	dDamaged                          // --on-damaged fail|keep
	dRotate                           // --no-autorotate
	dHWAccel                          // --hwaccel none|cuda|vaapi|auto
	dWorker                           // --worker, --worker-timeout, --worker-memory-mb
	dAll       = dStream | dDamaged | dRotate | dHWAccel | dWorker
	dIndexOnly = dStream | dRotate // what a command that reads the index only takes (plan)
)

// decodeFlags is the decode flag group: how a command decodes (extract.Decoding).
type decodeFlags struct {
	d   extract.Decoding
	has decodeFlag
}

// decodeNames are the group's flag names, by member.
var decodeNames = map[decodeFlag][]string{dStream: {"stream"}, dDamaged: {"on-damaged"}, dRotate: {"no-autorotate"},
	dHWAccel: {"hwaccel"}, dWorker: {"worker", "worker-timeout", "worker-memory-mb"}}

func addDecodeFlags(fs *flag.FlagSet, members decodeFlag) *decodeFlags {
	f := &decodeFlags{d: extract.Decoding{Stream: -1, WorkerTimeout: extract.DefaultWorkerTimeout, WorkerMemoryMB: extract.DefaultWorkerMemoryMB}, has: members}
	if members&dStream != 0 {
		fs.IntVar(&f.d.Stream, "stream", -1, "video stream index in the file (ffprobe's numbering); default: FFmpeg's best video stream")
	}
	if members&dDamaged != 0 {
		fs.StringVar(&f.d.OnDamaged, "on-damaged", "fail", "a frame the decoder concealed: fail (refuse it; what needs it fails, exit 1) or keep (use it; listed as damaged)")
	}
	if members&dRotate != 0 {
		fs.BoolVar(&f.d.NoAutorotate, "no-autorotate", false, "do not apply the container's display rotation/reflection")
	}
	if members&dHWAccel != 0 {
		fs.StringVar(&f.d.HWAccel, "hwaccel", "", "hardware decoding: none, cuda, vaapi, auto (frames and probe only: keyed inputs are FFmpeg's CPU frames)")
	}
	if members&dWorker != 0 {
		fs.BoolVar(&f.d.Worker, "worker", false, "decode in supervised child processes (untrusted files: a crash or hang fails that video only)")
		fs.DurationVar(&f.d.WorkerTimeout, "worker-timeout", extract.DefaultWorkerTimeout, "with --worker: deadline of each decoding process")
		fs.Int64Var(&f.d.WorkerMemoryMB, "worker-memory-mb", extract.DefaultWorkerMemoryMB, "with --worker: resident memory limit of each decoding process (MiB, 0 = none)")
	}
	return f
}

// given is the first flag of the group given on the command line ("" when none): for the modes
// where decoding is not the command's to choose.
func (f *decodeFlags) given(set map[string]bool) string {
	for m, names := range decodeNames {
		if f.has&m == 0 {
			continue
		}
		for _, n := range names {
			if set[n] {
				return n
			}
		}
	}
	return ""
}

// kernelFlag is --kernel: the resize kernel ("" = the default, pil-bicubic; a tensor runtime's own).
func kernelFlag(fs *flag.FlagSet) *string {
	return fs.String("kernel", "", "resize kernel (default "+extract.DefaultKernel+"): "+strings.Join(extract.Kernels(), " "))
}

// tensorFlags are extract's flags that decide the bytes of each object besides the grid.
type tensorFlags struct{ t extract.Tensor }

func addTensorFlags(fs *flag.FlagSet) *tensorFlags {
	f := &tensorFlags{}
	fs.StringVar(&f.t.Pipeline, "pipeline", "", "raw | cached | both (default: each config's pipeline, raw if unset)")
	fs.StringVar(&f.t.Kernel, "kernel", "", "resize kernel (default "+extract.DefaultKernel+"): "+strings.Join(extract.Kernels(), " "))
	fs.StringVar(&f.t.DType, "dtype", "u8", "tensor type: u8 | f32 | f16")
	fs.StringVar(&f.t.Norm, "norm", "clip", "normalisation for float dtypes: "+strings.Join(extract.NormNames(), "|")+" or mean=M|M|M,std=S|S|S")
	fs.StringVar(&f.t.Layout, "layout", "nhwc", "tensor layout: nhwc | nchw (float dtypes only)")
	return f
}

// stringsFlag collects a repeatable flag; `--videos a b c` also works where the rest are positionals.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

// seedHelp are the four seeds' words, one name each.
const (
	samplerSeedHelp   = "seed of the random sampling policies (SplitMix64)"
	llmSeedHelp       = "the model's sampling seed at --temperature > 0"
	bootstrapSeedHelp = "seed of the bootstrap resamples and the cascade folds (SplitMix64)"
)

// deprecatedVar registers old as a hidden flag of its own value (an old spelling that is not one new
// flag: import's --width and --height, now --size WxH): each use prints one line on stderr naming repl.
func deprecatedVar(fs *flag.FlagSet, v flag.Value, old, repl string) {
	fs.Var(&ownAlias{Value: v, name: fs.Name(), old: old, repl: repl, out: fs.Output()}, old, "deprecated: "+repl)
	hiddenMu.Lock()
	defer hiddenMu.Unlock()
	if hidden[fs] == nil {
		hidden[fs] = map[string]string{}
	}
	hidden[fs][old] = repl
}

type ownAlias struct {
	flag.Value
	name, old, repl string
	out             io.Writer
}

func (a *ownAlias) Set(s string) error {
	fmt.Fprintf(a.out, "%s: --%s is deprecated and goes in the next release: use %s\n", a.name, a.old, a.repl)
	return a.Value.Set(s)
}

func (a *ownAlias) Get() any {
	if g, ok := a.Value.(flag.Getter); ok {
		return g.Get()
	}
	return nil
}
