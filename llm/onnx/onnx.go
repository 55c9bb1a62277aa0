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

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
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
			return llm.Errorf("load onnxruntime", lib, llm.ErrModel, "shared library: %v (set FRAMESWEEP_ORT_LIB or lib=)", errors.Unwrap(err))
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

// Options configure a Runtime.
type Options struct {
	Threads int        // intra-op threads; default NumCPU
	Lib     string     // libonnxruntime.so.1; default $FRAMESWEEP_ORT_LIB
	Mean    [3]float32 // per channel, after scaling to [0,1]; default 0.5
	Std     [3]float32 // default 0.5
	Stretch bool       // resize to H×W ignoring the aspect ratio (default: keep it and pad right)
	H, W    int        // input size for models whose H/W are dynamic (e.g. PP-OCR cls: 48×192)
	Layout  string     // "nchw", "nhwc", or "" to read it from the model (required when dims 1 and 3 are both 3)
}

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
}

// Open opens a runtime from a parsed spec (llm.Opener).
func Open(sp llm.Spec) (llm.Runtime, error) {
	var o Options
	var err error
	if err := sp.Check([]string{"model"}, "threads", "lib", "mean", "std", "resize", "size", "layout"); err != nil {
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
	if o.Threads, err = sp.Int("threads", runtime.NumCPU(), 1); err != nil {
		return nil, err
	}
	o.Lib = sp.Params["lib"]
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
		f, err := strconv.ParseFloat(p, 32)
		if err != nil || (key == "std" && f == 0) {
			return out, llm.Errorf("parse spec", "", llm.ErrBadSpec, "onnx: %s=%q", key, v)
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
		o.Lib = os.Getenv("FRAMESWEEP_ORT_LIB")
	}
	if o.Std == [3]float32{} {
		o.Mean, o.Std = [3]float32{0.5, 0.5, 0.5}, [3]float32{0.5, 0.5, 0.5}
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

// Answer classifies the frames (or runs the given tensor) and maps class i to option i.
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
	var shape []int64
	var data []float32
	switch {
	case len(req.Tensors) > 0:
		// One image input: extra tensors, a tensor for another input, or frames beside the tensor would
		// otherwise be dropped without a word.
		t := req.Tensors[0]
		if len(req.Tensors) > 1 || len(req.Frames) > 0 || (t.Name != "" && t.Name != r.in) {
			return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "the model takes one tensor for input %q (got %d tensors, first named %q, and %d frames)", r.in, len(req.Tensors), t.Name, len(req.Frames))
		}
		shape, data = t.Shape, t.Data
		if len(shape) != 4 || shape[0] <= 0 || int64(len(data)) != shape[0]*shape[1]*shape[2]*shape[3] {
			return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "tensor shape %v does not match its %d values / rank 4", shape, len(data))
		}
	case len(req.Frames) > 0:
		var err error
		if shape, data, err = r.preprocess(req.Frames); err != nil {
			return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "preprocess: %v", err)
		}
	default:
		return nil, llm.Errorf("answer", r.path, llm.ErrBadRequest, "an image classifier needs frames (text-only is not possible)")
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

// preprocess resizes, scales and normalises frames into the model's layout. The normalisation is
// native's (the NumPy-checked float path shared with the cache's float tensors).
func (r *Runtime) preprocess(frames []*rgb.Image) ([]int64, []float32, error) {
	n, h, w := len(frames), r.h, r.w
	norm := native.Norm{Scale: 1.0 / 255, Mean: r.o.Mean, Std: r.o.Std}
	layout := native.NCHW
	if r.nhwc {
		layout = native.NHWC
	}
	data := make([]float32, n*3*h*w)
	var tile []float32
	for i, f := range frames {
		tw := w
		if !r.o.Stretch {
			tw = int(math.Ceil(float64(h) * float64(f.W) / float64(f.H)))
			tw = max(1, min(tw, w))
		}
		img := resizeBilinear(f, tw, h)
		tile = append(tile[:0], make([]float32, 3*tw*h)...)
		if err := native.ToFloat32(tile, img, norm, layout); err != nil {
			return nil, nil, err
		}
		// The tw-wide image goes to the left of the w-wide input; the padding stays 0 after
		// normalisation, as PP-OCR pads.
		base := data[i*3*h*w : (i+1)*3*h*w]
		if r.nhwc {
			for y := 0; y < h; y++ {
				copy(base[y*w*3:y*w*3+tw*3], tile[y*tw*3:(y+1)*tw*3])
			}
		} else {
			for c := 0; c < 3; c++ {
				for y := 0; y < h; y++ {
					copy(base[c*h*w+y*w:c*h*w+y*w+tw], tile[c*h*tw+y*tw:c*h*tw+(y+1)*tw])
				}
			}
		}
	}
	if r.nhwc {
		return []int64{int64(n), int64(h), int64(w), 3}, data, nil
	}
	return []int64{int64(n), 3, int64(h), int64(w)}, data, nil
}

// resizeBilinear is a plain half-pixel-centre bilinear resize (no antialiasing: the classifier's inputs
// are small, and this keeps llm/onnx free of the resize package).
func resizeBilinear(src *rgb.Image, w, h int) *rgb.Image {
	dst := rgb.New(w, h)
	sx := float64(src.W) / float64(w)
	sy := float64(src.H) / float64(h)
	for y := 0; y < h; y++ {
		fy := math.Max(0, (float64(y)+0.5)*sy-0.5)
		y0 := min(int(fy), src.H-1)
		y1 := min(y0+1, src.H-1)
		wy := fy - float64(y0)
		for x := 0; x < w; x++ {
			fx := math.Max(0, (float64(x)+0.5)*sx-0.5)
			x0 := min(int(fx), src.W-1)
			x1 := min(x0+1, src.W-1)
			wx := fx - float64(x0)
			for c := 0; c < 3; c++ {
				a := float64(src.Pix[y0*src.Stride+3*x0+c])*(1-wx) + float64(src.Pix[y0*src.Stride+3*x1+c])*wx
				b := float64(src.Pix[y1*src.Stride+3*x0+c])*(1-wx) + float64(src.Pix[y1*src.Stride+3*x1+c])*wx
				dst.Pix[y*dst.Stride+3*x+c] = uint8(math.Round(a*(1-wy) + b*wy))
			}
		}
	}
	return dst
}
