package extract

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/engine/worker"
	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/resize"
)

// The command line's words for the engine's options. The CLI registers one flag per field, with the
// same name in every command that decodes (README "Commands"), and builds the engine's options
// through these types only: the rules on the values live here, beside what they configure.

// Default worker limits: --worker-timeout and --worker-memory-mb.
const (
	DefaultWorkerTimeout  = 30 * time.Minute
	DefaultWorkerMemoryMB = 8192
)

// Decoding is how a command decodes, as its decode flags say (--stream, --on-damaged,
// --no-autorotate, --hwaccel, --worker, --worker-timeout, --worker-memory-mb).
type Decoding struct {
	Stream         int    // the video stream's index in the file; -1: FFmpeg's best video stream
	OnDamaged      string // fail | keep ("" = fail)
	NoAutorotate   bool
	HWAccel        string // "", none, cuda, vaapi, auto
	Worker         bool   // decode in supervised child processes
	WorkerTimeout  time.Duration
	WorkerMemoryMB int64 // 0: no limit
}

// Options are the engine options d names; an error names the flag and is bad usage.
func (d Decoding) Options() (pipeline.Options, error) {
	o := pipeline.Options{NoAutorotate: d.NoAutorotate, HWAccel: d.HWAccel}
	switch {
	case d.Stream < -1:
		return o, fmt.Errorf("--stream %d: want a stream index ≥ 0", d.Stream)
	case d.Stream >= 0:
		o.Stream = decode.StreamAt(d.Stream)
	}
	var err error
	if o.OnDamaged, err = decode.ParseDamagePolicy(d.OnDamaged); err != nil {
		return o, fmt.Errorf("--on-damaged: %v", err)
	}
	if _, err := decode.ParseHWAccel(d.HWAccel); err != nil {
		return o, fmt.Errorf("--hwaccel: %v", err)
	}
	if d.WorkerTimeout < 0 || d.WorkerMemoryMB < 0 {
		return o, fmt.Errorf("--worker-timeout and --worker-memory-mb must be ≥ 0")
	}
	if d.Worker {
		o.Worker = &worker.Limits{Timeout: d.WorkerTimeout, Memory: d.WorkerMemoryMB << 20}
	}
	return o, nil
}

// Tensor is what an object's bytes are besides the grid and the decoding (extract's --pipeline,
// --kernel, --dtype, --norm, --layout); "" fields are the defaults.
type Tensor struct {
	Pipeline string // raw | cached | both ("": each config's own)
	Kernel   string
	DType    string // u8 | f32 | f16
	Norm     string // a float dtype's normalisation
	Layout   string // nhwc | nchw
}

// Apply sets t's fields of o; an error names the flag and is bad usage.
func (t Tensor) Apply(o *pipeline.Options) error {
	o.Kernel, o.Layout = t.Kernel, strings.ToUpper(t.Layout)
	switch t.Pipeline {
	case "":
	case cache.PipelineRaw, cache.PipelineCached:
		o.Pipelines = []string{t.Pipeline}
	case "both":
		o.Pipelines = []string{cache.PipelineRaw, cache.PipelineCached}
	default:
		return fmt.Errorf("--pipeline %q: want raw, cached or both", t.Pipeline)
	}
	switch t.DType {
	case "", "u8":
		o.DType = cache.U8
	case "f32":
		o.DType, o.Norm = cache.F32, t.Norm
	case "f16":
		o.DType, o.Norm = cache.F16, t.Norm
	default:
		return fmt.Errorf("--dtype %q: want u8, f32 or f16", t.DType)
	}
	return CheckKernel(t.Kernel)
}

// DefaultKernel is the resize kernel of every command that resizes.
const DefaultKernel = resize.DefaultKernel

// Kernels are the resize kernels' names.
func Kernels() []string { return resize.Kernels() }

// NormNames are the named normalisations of float tensors.
func NormNames() []string { return native.NormNames() }

// CheckKernel refuses a kernel name no resizer has ("" is the default); the error names --kernel.
func CheckKernel(k string) error {
	if k == "" {
		return nil
	}
	if err := resize.CheckKernel(k); err != nil {
		return fmt.Errorf("--kernel %q: want one of %s", k, strings.Join(resize.Kernels(), ", "))
	}
	return nil
}

// Check validates o for g's configs before any video is opened (what every video would refuse: bad
// options, hardware decoding, options a harness loader decides itself).
func Check(o Options) error {
	if err := o.Options.Check(); err != nil {
		return err
	}
	if o.Grid == nil {
		return nil
	}
	return pipeline.CheckConfigs(o.Grid.Configs, o.Options)
}

// Probe describes the video at path through the source layer (the decoder's index scan, in process or
// in a worker as o says; FramesDetail adds every frame's pts and key flag).
func Probe(ctx context.Context, path string, o pipeline.Options) (decode.Info, error) {
	v, src, err := pipeline.OpenSource(ctx, pipeline.VideoRef{Path: path}, o)
	if err != nil {
		return decode.Info{}, err
	}
	src.Close()
	return v.Info, nil
}

// Libraries are the versions of the linked libraries that decide an input's pixels.
func Libraries() map[string]string { return pipeline.Libraries() }

// SetCLILogLevel quiets FFmpeg's own log lines for a command-line process (FRAMESWEEP_FFMPEG_LOG sets
// another level), so that a handled error stays one line on stderr.
func SetCLILogLevel() { decode.SetLogLevel(decode.CLILogLevel()) }

// WorkerMain is the child side of supervised decoding (the hidden `framesweep worker` command): one
// job as JSON on stdin, the answer on stdout.
func WorkerMain(args []string, stdout, stderr io.Writer) int {
	return worker.Main(args, os.Stdin, stdout, stderr)
}

// LiveDecoderHandles is how many FFmpeg objects decode holds now: 0 at a command's end in a -tags
// leakcheck build (always 0 in others).
func LiveDecoderHandles() int { return decode.LiveHandles() }
