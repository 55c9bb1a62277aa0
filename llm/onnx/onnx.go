package onnx

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/resize/geom"
)

var (
	live   atomic.Int64
	envMu  sync.Mutex
	envRef int
)

// LiveHandles returns the number of ONNX Runtime handles (sessions, environment references) alive.
func LiveHandles() int64 { return live.Load() }

// acquireEnv initialises the process-wide ORT environment on first use.
func acquireEnv(lib string) error {
	envMu.Lock()
	defer envMu.Unlock()
	if envRef == 0 {
		if _, err := os.Stat(lib); err != nil {
			return llm.Errorf("load onnxruntime", lib, llm.ErrModel, "shared library: %v (run scripts/deps.sh, or set FRAMESWEEP_ORT_LIB or lib=)", errors.Unwrap(err))
		}
		ort.SetSharedLibraryPath(lib)
		if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
			return llm.Errorf("load onnxruntime", lib, llm.ErrModel, "%v", err)
		}
	}
	envRef++
	live.Add(1)
	return nil
}

func releaseEnv() {
	envMu.Lock()
	defer envMu.Unlock()
	envRef--
	live.Add(-1)
	if envRef == 0 {
		ort.DestroyEnvironment()
	}
}

// Options configure a Runtime. Mean, Std, Stretch, H, W and Kernel describe the input the model was
// trained on; the runtime does not preprocess anything itself but states them (Input), and the engine
// builds exactly that tensor.
type Options struct {
	Threads int        // intra-op threads; default NumCPU
	Lib     string     // libonnxruntime.so.1; default DefaultLib()
	Mean    [3]float32 // per channel, after scaling to [0,1]; default 0.5
	Std     [3]float32 // default 0.5
	Stretch bool       // resize to H×W ignoring the aspect ratio (default: keep it and pad right)
	H, W    int        // input size for models whose H/W are dynamic (e.g. PP-OCR cls: 48×192)
	Layout  string     // "nchw", "nhwc", or "" to read it from the model (required when dims 1 and 3 are both 3)
	Kernel  string     // resize kernel of the model's preprocessing; default cv-linear (cv2.resize, PaddleOCR's)
}

// DefaultKernel is the resize kernel of the input when the spec names none: OpenCV's bilinear
// cv2.resize, what PaddleOCR's resize_norm_img calls.
const DefaultKernel = "cv-linear"

// Runtime is one ONNX session. Requests run one at a time; Close is idempotent.
type Runtime struct {
	mu      sync.Mutex
	sess    *ort.DynamicAdvancedSession
	path    string
	in, out string
	nhwc    bool
	h, w    int
	classes int
	o       Options
	// consumed, when set (tests), sees the tensor handed to ONNX Runtime.
	consumed func(shape []int64, data []float32)
}

// Open opens a runtime from a parsed spec (llm.Opener).
func Open(sp llm.Spec) (llm.Runtime, error) {
	var o Options
	var err error
	if err := sp.Check([]string{"model"}, "threads", "lib", "mean", "std", "resize", "size", "layout", "kernel"); err != nil {
		return nil, err
	}
	switch o.Layout = sp.Params["layout"]; o.Layout {
	case "", "nchw", "nhwc":
	default:
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "onnx: layout=%q (want nchw or nhwc)", o.Layout)
	}
	if v := sp.Params["size"]; v != "" {
		var err error
		if o.H, o.W, err = geom.ParseWxH(v); err != nil {
			return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "onnx: size=%q (want HxW, e.g. 48x192)", v)
		}
	}
	if o.Threads, err = sp.Int("threads", runtime.NumCPU(), 1, llm.MaxThreads); err != nil {
		return nil, err
	}
	o.Lib, o.Kernel = sp.Params["lib"], sp.Params["kernel"]
	if o.Mean, err = triple(sp, "mean", 0.5); err != nil {
		return nil, err
	}
	if o.Std, err = triple(sp, "std", 0.5); err != nil {
		return nil, err
	}
	switch sp.Params["resize"] {
	case "", "pad":
	case "stretch":
		o.Stretch = true
	default:
		return nil, llm.Errorf("parse spec", "", llm.ErrBadSpec, "onnx: resize=%q (want pad or stretch)", sp.Params["resize"])
	}
	return New(sp.Params["model"], o)
}

func triple(sp llm.Spec, key string, def float32) ([3]float32, error) {
	v, ok := sp.Params[key]
	if !ok {
		return [3]float32{def, def, def}, nil
	}
	parts := strings.Split(v, "|")
	var out [3]float32
	if len(parts) == 1 {
		parts = []string{parts[0], parts[0], parts[0]}
	}
	if len(parts) != 3 {
		return out, llm.Errorf("parse spec", "", llm.ErrBadSpec, "onnx: %s=%q (want one value or three separated by |)", key, v)
	}
	for i, p := range parts {
		// Finite and of the size normalisation constants have (NaN would make every input NaN, a 0
		// std divides by zero).
		f, err := num.In(-1e6, 1e6).ParseFloat("", p)
		if err == nil && key == "std" && f == 0 {
			err = errors.New("std=0 divides by zero")
		}
		if err != nil {
			return out, llm.Errorf("parse spec", "", llm.ErrBadSpec, "onnx: %s=%q: %v", key, v, err)
		}
		out[i] = float32(f)
	}
	return out, nil
}

// New opens model after reading its input and output declarations.
func New(model string, o Options) (*Runtime, error) {
	if o.Threads <= 0 {
		o.Threads = runtime.NumCPU()
	}
	if o.Lib == "" {
		o.Lib = DefaultLib()
	}
	if o.Std == [3]float32{} {
		o.Mean, o.Std = [3]float32{0.5, 0.5, 0.5}, [3]float32{0.5, 0.5, 0.5}
	}
	if o.Kernel == "" {
		o.Kernel = DefaultKernel
	}
	st, err := os.Stat(model)
	if err != nil {
		return nil, llm.Errorf("load model", model, llm.ErrModel, "%v", errors.Unwrap(err))
	}
	if st.IsDir() {
		return nil, llm.Errorf("load model", model, llm.ErrModel, "is a directory")
	}
	if err := acquireEnv(o.Lib); err != nil {
		return nil, err
	}
	r := &Runtime{path: model, o: o}
	if err := r.load(); err != nil {
		releaseEnv()
		return nil, err
	}
	return r, nil
}

func (r *Runtime) load() error {
	ins, outs, err := ort.GetInputOutputInfo(r.path)
	if err != nil {
		return llm.Errorf("load model", r.path, llm.ErrModel, "not a loadable ONNX model: %v", err)
	}
	if len(ins) != 1 || len(outs) < 1 {
		return llm.Errorf("load model", r.path, llm.ErrModel, "want 1 image input and an output, model has %d inputs, %d outputs", len(ins), len(outs))
	}
	in, out := ins[0], outs[0]
	if in.OrtValueType != ort.ONNXTypeTensor || in.DataType != ort.TensorElementDataTypeFloat || len(in.Dimensions) != 4 {
		return llm.Errorf("load model", r.path, llm.ErrModel, "input %s: want a float32 rank-4 image tensor", in.String())
	}
	nhwc, err := layoutOf(in.Dimensions, r.o.Layout)
	if err != nil {
		return &llm.Error{Op: "load model", Path: r.path, Err: fmt.Errorf("input %s: %w", in.String(), err)}
	}
	d := in.Dimensions
	mh, mw := d[2], d[3]
	if nhwc {
		mh, mw = d[1], d[2]
	}
	r.nhwc, r.h, r.w = nhwc, int(mh), int(mw)
	if mh <= 0 || mw <= 0 { // dynamic in the model: the spec must say
		if r.o.H <= 0 || r.o.W <= 0 {
			return llm.Errorf("load model", r.path, llm.ErrBadSpec, "input %s has a dynamic height/width: give size=HxW", in.String())
		}
		r.h, r.w = r.o.H, r.o.W
	} else if r.o.H > 0 && (r.o.H != r.h || r.o.W != r.w) {
		return llm.Errorf("load model", r.path, llm.ErrBadSpec, "size=%dx%d but the model's input is %dx%d", r.o.H, r.o.W, r.h, r.w)
	}
	if out.OrtValueType != ort.ONNXTypeTensor || out.DataType != ort.TensorElementDataTypeFloat || len(out.Dimensions) != 2 || out.Dimensions[1] <= 0 {
		return llm.Errorf("load model", r.path, llm.ErrModel, "output %s: want float32 [N,K] class scores", out.String())
	}
	r.in, r.out, r.classes = in.Name, out.Name, int(out.Dimensions[1])
	so, err := ort.NewSessionOptions()
	if err != nil {
		return llm.Errorf("load model", r.path, llm.ErrModel, "%v", err)
	}
	defer so.Destroy()
	if err := so.SetIntraOpNumThreads(r.o.Threads); err != nil {
		return llm.Errorf("load model", r.path, llm.ErrModel, "%v", err)
	}
	if err := so.SetInterOpNumThreads(1); err != nil {
		return llm.Errorf("load model", r.path, llm.ErrModel, "%v", err)
	}
	s, err := ort.NewDynamicAdvancedSession(r.path, []string{r.in}, []string{r.out}, so)
	if err != nil {
		return llm.Errorf("load model", r.path, llm.ErrModel, "%v", err)
	}
	r.sess = s
	live.Add(1)
	return nil
}

// layoutOf says whether an [N,?,?,?] image input is NHWC. The dimension that equals 3 decides only when
// just one of dims 1 and 3 does: [N,3,3,W] is NCHW but [N,3,W,3] is NHWC with height 3, so when both are 3
// the spec must say (layout=). An explicit layout is checked against the model (its channel dimension
// must be 3 or dynamic). Dynamic dimensions are <= 0.
func layoutOf(d []int64, layout string) (nhwc bool, err error) {
	switch layout {
	case "nchw", "nhwc":
		c := d[1]
		if layout == "nhwc" {
			c = d[3]
		}
		if c != 3 && c > 0 {
			return false, fmt.Errorf("%w: layout=%s but the channel dimension is %d, not 3", llm.ErrBadSpec, layout, c)
		}
		return layout == "nhwc", nil
	case "":
	default:
		return false, fmt.Errorf("%w: layout=%q (want nchw or nhwc)", llm.ErrBadSpec, layout)
	}
	switch {
	case d[1] == 3 && d[3] == 3:
		return false, fmt.Errorf("%w: dims 1 and 3 are both 3, so NCHW and NHWC are both possible: give layout=nchw or layout=nhwc", llm.ErrBadSpec)
	case d[1] == 3:
		return false, nil
	case d[3] == 3:
		return true, nil
	}
	return false, fmt.Errorf("%w: want [N,3,H,W] or [N,H,W,3] (or give layout= when the channel dimension is dynamic)", llm.ErrModel)
}

// Input is how the engine builds this model's input (llm.TensorInput): the model's size as a
// geometry (pad:WxH keeping the aspect ratio and padding right with zeros after normalisation, as
// PaddleOCR does, or WxH stretched), the kernel, float32, the normalisation and the model's layout.
func (r *Runtime) Input() llm.InputSpec {
	g := geom.Geometry(geom.PadRight{W: r.w, H: r.h})
	if r.o.Stretch {
		g = geom.Fixed{W: r.w, H: r.h}
	}
	layout := "NCHW"
	if r.nhwc {
		layout = "NHWC"
	}
	return llm.InputSpec{Geometry: g.String(), Kernel: r.o.Kernel, DType: "F32", Layout: layout,
		Norm: "mean=" + floats(r.o.Mean) + ",std=" + floats(r.o.Std)}
}

func floats(v [3]float32) string {
	f := func(x float32) string { return strconv.FormatFloat(float64(x), 'g', -1, 32) }
	return f(v[0]) + "|" + f(v[1]) + "|" + f(v[2])
}

// Classes returns the number of classes (= options the model can answer).
func (r *Runtime) Classes() int { return r.classes }

// Close destroys the session and releases the environment; it is idempotent.
func (r *Runtime) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess == nil {
		return nil
	}
	err := r.sess.Destroy()
	r.sess = nil
	live.Add(-1)
	releaseEnv()
	return err
}

// Answer classifies the images of the request's tensor (the engine's, built as Input says) and maps
// class i to option i.
func (r *Runtime) Answer(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	_, tpl, err := llm.Render(req)
	if err != nil {
		return nil, err
	}
	if len(req.Options) != r.classes {
		return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "%d options but the model has %d classes (option i is class i)", len(req.Options), r.classes)
	}
	shape, data, err := r.tensor(req)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess == nil {
		return nil, llm.Errorf("answer", r.path, llm.ErrClosed, "")
	}
	start := time.Now()
	if r.consumed != nil {
		r.consumed(shape, data)
	}
	in, err := ort.NewTensor(ort.NewShape(shape...), data)
	if err != nil {
		return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "%v", err)
	}
	defer in.Destroy()
	outs := []ort.Value{nil}
	if err := r.sess.Run([]ort.Value{in}, outs); err != nil {
		return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "run: %v", err)
	}
	defer outs[0].Destroy()
	ot, ok := outs[0].(*ort.Tensor[float32])
	if !ok {
		return nil, llm.Errorf("answer", r.path, llm.ErrModel, "output is not float32")
	}
	scores := ot.GetData()
	n := int(shape[0])
	if len(scores) != n*r.classes {
		return nil, llm.Errorf("answer", r.path, llm.ErrModel, "output has %d values, want %d×%d", len(scores), n, r.classes)
	}
	mean := make([]float64, r.classes)
	for i := 0; i < n; i++ {
		p := asProbs(scores[i*r.classes : (i+1)*r.classes])
		for k := range p {
			mean[k] += p[k] / float64(n)
		}
	}
	letters := llm.Letters(req.Options)
	probs := make(map[string]float64, len(letters))
	best := 0
	var sum float64
	for k := range mean {
		sum += mean[k]
		if mean[k] > mean[best] {
			best = k
		}
	}
	for k, l := range letters {
		probs[l] = mean[k] / sum
	}
	resp := &llm.Response{Text: letters[best], Probs: probs, LatencyS: time.Since(start).Seconds()}
	llm.Finish(resp, req, tpl)
	return resp, nil
}

// asProbs returns row itself when it already is a probability vector, else its softmax.
func asProbs(row []float32) []float64 {
	p := make([]float64, len(row))
	var sum float64
	isProb := true
	for i, v := range row {
		p[i] = float64(v)
		sum += p[i]
		if v < 0 || v > 1 || math.IsNaN(float64(v)) {
			isProb = false
		}
	}
	if isProb && math.Abs(sum-1) < 1e-3 {
		return p
	}
	mx := math.Inf(-1)
	for _, v := range p {
		mx = math.Max(mx, v)
	}
	sum = 0
	for i := range p {
		p[i] = math.Exp(p[i] - mx)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// tensor is the request's one tensor, checked against the model's input: [N,3,H,W] (or [N,H,W,3])
// at the model's size. Frames are refused: what the model sees is the engine's tensor, built as
// Input says, so that its sha256 (a record's input_sha256) is what the model consumed.
func (r *Runtime) tensor(req *llm.Request) ([]int64, []float32, error) {
	in := r.Input()
	if len(req.Tensors) == 0 {
		if len(req.Frames) > 0 {
			return nil, nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "the model takes the engine's tensor (Request.Tensors), not frames: build it with geometry %s, kernel %s, dtype f32, norm %s, layout %s", in.Geometry, in.Kernel, in.Norm, in.Layout)
		}
		return nil, nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "an image classifier needs an image tensor (text-only is not possible)")
	}
	// One image input: extra tensors, a tensor for another input, or frames beside the tensor would
	// otherwise be dropped without a word.
	t := req.Tensors[0]
	if len(req.Tensors) > 1 || len(req.Frames) > 0 || (t.Name != "" && t.Name != r.in) {
		return nil, nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "the model takes one tensor for input %q (got %d tensors, first named %q, and %d frames)", r.in, len(req.Tensors), t.Name, len(req.Frames))
	}
	shape, data := t.Shape, t.Data
	want := []int64{3, int64(r.h), int64(r.w)}
	if r.nhwc {
		want = []int64{int64(r.h), int64(r.w), 3}
	}
	if len(shape) != 4 || shape[0] <= 0 || shape[1] != want[0] || shape[2] != want[1] || shape[3] != want[2] || int64(len(data)) != shape[0]*shape[1]*shape[2]*shape[3] {
		return nil, nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "tensor shape %v with %d values; the model takes [N %d %d %d] (%s): build it with geometry %s, kernel %s, dtype f32, norm %s", shape, len(data), want[0], want[1], want[2], in.Layout, in.Geometry, in.Kernel, in.Norm)
	}
	return shape, data, nil
}
