package onnx

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/internal/testsupport/testframes"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
	"github.com/framesweep/framesweep/sampler"
)

func modelPath(t *testing.T) string {
	return testenv.NeedEnv(t, "FRAMESWEEP_OCR_MODEL", "FRAMESWEEP_ORT_LIB")[0]
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && LiveHandles() != 0 {
		println("leak: LiveHandles() =", LiveHandles())
		code = 1
	}
	os.Exit(code)
}

var orientation = []string{"A. no, the text is upright (0°)", "B. yes, it is upside down (180°)"}

// textLine renders dark text on a light background, scaled ×3, like a cropped text line.
func textLine(s string) *rgb.Image {
	face := basicfont.Face7x13
	w, h := 7*len(s)+8, 18
	small := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(small, small.Bounds(), image.NewUniform(color.RGBA{235, 235, 225, 255}), image.Point{}, draw.Src)
	d := font.Drawer{Dst: small, Src: image.NewUniform(color.RGBA{20, 20, 30, 255}), Face: face, Dot: fixed.P(4, 13)}
	d.DrawString(s)
	const k = 3
	out := rgb.New(w*k, h*k)
	for y := 0; y < h*k; y++ {
		for x := 0; x < w*k; x++ {
			c := small.RGBAAt(x/k, y/k)
			copy(out.Pix[y*out.Stride+3*x:], []byte{c.R, c.G, c.B})
		}
	}
	return out
}

func rotate180(m *rgb.Image) *rgb.Image {
	out := rgb.New(m.W, m.H)
	for y := 0; y < m.H; y++ {
		for x := 0; x < m.W; x++ {
			copy(out.Pix[(m.H-1-y)*out.Stride+3*(m.W-1-x):][:3], m.Pix[y*m.Stride+3*x:][:3])
		}
	}
	return out
}

func sumsToOne(t *testing.T, p map[string]float64, n int) {
	t.Helper()
	var s float64
	for _, v := range p {
		s += v
	}
	if len(p) != n || math.Abs(s-1) > 1e-9 {
		t.Fatalf("probs %v: want %d entries summing to 1", p, n)
	}
}

// engineTensor builds, through the engine's per-frame path (pipeline.ImagesTensor), the tensor rt says
// it takes for imgs.
func engineTensor(t *testing.T, rt llm.Runtime, imgs []*rgb.Image) llm.Tensor {
	t.Helper()
	spec := rt.(llm.TensorInput).Input()
	g, err := geom.Parse(spec.Geometry)
	if err != nil {
		t.Fatal(err)
	}
	data, shape, err := pipeline.ImagesTensor(imgs, g, inputOptions(spec))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := pipeline.Float32s(data)
	if err != nil {
		t.Fatal(err)
	}
	sh := make([]int64, len(shape))
	for i, d := range shape {
		sh[i] = int64(d)
	}
	return llm.Tensor{Shape: sh, Data: vals}
}

func inputOptions(spec llm.InputSpec) pipeline.Options {
	return pipeline.Options{Kernel: spec.Kernel, DType: cache.DType(spec.DType), Norm: spec.Norm, Layout: spec.Layout}
}

// TestOrientationOfText: the real PP-OCR classifier answers "is this upside down?" correctly on a
// rendered text line and on its 180° rotation.
func TestOrientationOfText(t *testing.T) {
	rt, err := llm.Registry{"onnx": Open}.Open("onnx:model=" + modelPath(t) + ",threads=1,size=48x192")
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	line := textLine("The quick brown fox 1234")
	for _, c := range []struct {
		img  *rgb.Image
		want string
	}{{line, "A"}, {rotate180(line), "B"}} {
		resp, err := rt.Answer(context.Background(), &llm.Request{Tensors: []llm.Tensor{engineTensor(t, rt, []*rgb.Image{c.img})}, Question: "Is this text upside down?", Options: orientation})
		if err != nil {
			t.Fatal(err)
		}
		sumsToOne(t, resp.Probs, 2)
		if resp.Choice != c.want || resp.Probs[c.want] < 0.6 {
			t.Errorf("choice %q probs %v, want %s", resp.Choice, resp.Probs, c.want)
		}
	}
}

// TestVideoFrames: a multiple-choice question about real video frames (batch of 3, mean over frames).
func TestVideoFrames(t *testing.T) {
	model := modelPath(t)
	video := testenv.SharedVideo(t, testframes.Video)
	fr, err := testframes.Extract(video, []int{0, 45, 90}, 200, 160)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := New(model, Options{Threads: 1, H: 48, W: 192})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	resp, err := rt.Answer(context.Background(), &llm.Request{Tensors: []llm.Tensor{engineTensor(t, rt, fr)}, Question: "Are these frames upside down?", Options: orientation, Template: llm.TemplateVideoMME})
	if err != nil {
		t.Fatal(err)
	}
	sumsToOne(t, resp.Probs, 2)
	if resp.Template != llm.TemplateVideoMME || resp.Choice == "" || resp.Text != resp.Choice {
		t.Errorf("%+v", resp)
	}
	// The 180° rotation of the same frames must move the probabilities.
	rot := make([]*rgb.Image, len(fr))
	for i := range fr {
		rot[i] = rotate180(fr[i])
	}
	r2, err := rt.Answer(context.Background(), &llm.Request{Tensors: []llm.Tensor{engineTensor(t, rt, rot)}, Question: "q", Options: orientation})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Probs["B"] == resp.Probs["B"] {
		t.Errorf("rotation did not change the answer distribution: %v", resp.Probs)
	}
	t.Logf("upright %v, rotated %v", resp.Probs, r2.Probs)
	// Frames are refused, with what to build instead: the runtime never resizes or converts itself.
	_, err = rt.Answer(context.Background(), &llm.Request{Frames: fr, Question: "q", Options: orientation})
	if !errors.Is(err, llm.ErrBadRequest) || !strings.Contains(err.Error(), "geometry pad:192x48, kernel cv-linear, dtype f32, norm mean=0.5|0.5|0.5,std=0.5|0.5|0.5, layout NCHW") {
		t.Errorf("frames: %v", err)
	}
}

// TestConsumesEngineTensor: the tensor ONNX Runtime is handed is, byte for byte, the frames tensor the
// engine built from a real video for the configuration the runtime asks for (Input): its sha256 is
// the object's DataSHA256, which a sweep records as input_sha256. A tensor of another size is refused.
func TestConsumesEngineTensor(t *testing.T) {
	rt, err := New(modelPath(t), Options{Threads: 1, H: 48, W: 192})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	spec := rt.Input()
	if spec != (llm.InputSpec{Geometry: "pad:192x48", Kernel: "cv-linear", DType: "F32", Norm: "mean=0.5|0.5|0.5,std=0.5|0.5|0.5", Layout: "NCHW"}) {
		t.Fatalf("input %+v", spec)
	}
	ctx := context.Background()
	o := inputOptions(spec)
	v, src, err := pipeline.OpenVideo(ctx, pipeline.VideoRef{Path: filepath.Join("..", "..", "testdata", "videos", "nasa_13013.mp4")}, o)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cfg, err := grid.One("uniform", sampler.Request{Frames: 3}, spec.Geometry, "")
	if err != nil {
		t.Fatal(err)
	}
	jobs, fails, err := pipeline.PlanJobs(v, []grid.Config{cfg}, o)
	if err != nil || len(fails) > 0 || len(jobs) != 1 {
		t.Fatal(err, fails)
	}
	var obj *pipeline.Object
	if _, jerrs, err := pipeline.Run(ctx, v, src, jobs, &pipeline.MemorySink{Done: func(ob *pipeline.Object) error { obj = ob; return nil }}); err != nil || len(jerrs) > 0 {
		t.Fatal(err, jerrs)
	}
	if obj.Result.Job.Norm != "half" || fmt.Sprint(obj.Result.Job.Shape()) != "[3 3 48 192]" {
		t.Fatalf("engine job: norm %s shape %v", obj.Result.Job.Norm, obj.Result.Job.Shape())
	}
	vals, err := pipeline.Float32s(obj.Data)
	if err != nil {
		t.Fatal(err)
	}
	var consumed []byte
	rt.consumed = func(shape []int64, data []float32) {
		for _, x := range data {
			consumed = binary.LittleEndian.AppendUint32(consumed, math.Float32bits(x))
		}
	}
	if _, err := rt.Answer(ctx, &llm.Request{Tensors: []llm.Tensor{{Shape: []int64{3, 3, 48, 192}, Data: vals}}, Question: "q", Options: orientation}); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(consumed); hex.EncodeToString(sum[:]) != obj.DataSHA256 {
		t.Errorf("ONNX Runtime consumed %d bytes hashing to %x; the engine's tensor (input_sha256) is %s", len(consumed), sum, obj.DataSHA256)
	}
	wide := llm.Tensor{Shape: []int64{1, 3, 48, 200}, Data: make([]float32, 3*48*200)}
	if _, err := rt.Answer(ctx, &llm.Request{Tensors: []llm.Tensor{wide}, Question: "q", Options: orientation}); !errors.Is(err, llm.ErrBadRequest) {
		t.Errorf("a 48x200 tensor for a 48x192 model: %v", err)
	}
}

func TestBadInputs(t *testing.T) {
	model := modelPath(t)
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.onnx")
	os.WriteFile(junk, []byte("this is not a protobuf"), 0o644)
	good, _ := os.ReadFile(model)
	trunc := filepath.Join(dir, "trunc.onnx")
	os.WriteFile(trunc, good[:len(good)/3], 0o644)
	for _, p := range []string{junk, trunc, filepath.Join(dir, "missing.onnx"), dir} {
		_, err := New(p, Options{Threads: 1, H: 48, W: 192})
		var e *llm.Error
		if !errors.Is(err, llm.ErrModel) || !errors.As(err, &e) || e.Path != p {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := New(model, Options{Lib: filepath.Join(dir, "nolib.so")}); !errors.Is(err, llm.ErrModel) {
		t.Errorf("missing library: %v", err)
	}
	rt, err := New(model, Options{Threads: 1, H: 48, W: 192})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Answer(context.Background(), &llm.Request{Question: "q", Options: orientation}); !errors.Is(err, llm.ErrBadRequest) {
		t.Errorf("text-only: %v", err)
	}
	if _, err := rt.Answer(context.Background(), &llm.Request{Tensors: []llm.Tensor{engineTensor(t, rt, []*rgb.Image{textLine("x")})}, Question: "q", Options: []string{"A. a", "B. b", "C. c"}}); !errors.Is(err, llm.ErrBadRequest) {
		t.Errorf("3 options for 2 classes: %v", err)
	}
	ten := llm.Tensor{Shape: []int64{1, 3, 48, 192}, Data: make([]float32, 3*48*192)}
	if _, err := rt.Answer(context.Background(), &llm.Request{Tensors: []llm.Tensor{ten}, Question: "q", Options: orientation}); err != nil {
		t.Errorf("tensor input: %v", err)
	}
	named := ten
	named.Name = "not_an_input"
	for what, req := range map[string]*llm.Request{
		"tensor for another input": {Tensors: []llm.Tensor{named}, Question: "q", Options: orientation},
		"two tensors":              {Tensors: []llm.Tensor{ten, ten}, Question: "q", Options: orientation},
		"tensor and frames":        {Tensors: []llm.Tensor{ten}, Frames: []*rgb.Image{textLine("x")}, Question: "q", Options: orientation},
	} {
		if _, err := rt.Answer(context.Background(), req); !errors.Is(err, llm.ErrBadRequest) {
			t.Errorf("%s: %v", what, err)
		}
	}
	rt.Close()
	rt.Close()
	if _, err := rt.Answer(context.Background(), &llm.Request{Tensors: []llm.Tensor{ten}, Question: "q", Options: orientation}); !errors.Is(err, llm.ErrClosed) {
		t.Errorf("after close: %v", err)
	}
	if LiveHandles() != 0 {
		t.Errorf("LiveHandles = %d", LiveHandles())
	}
}
