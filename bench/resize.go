package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/framesweep/framesweep/internal/piloracle"
	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/rgb"
)

// ResizeCase is one source size → output size of the resize benchmark.
type ResizeCase struct{ SrcW, SrcH, DstW, DstH int }

// DefaultResizeCases are the sizes: 1080p → 448² and 224², and 720p → 1008×560.
func DefaultResizeCases() []ResizeCase {
	return []ResizeCase{{1920, 1080, 448, 448}, {1920, 1080, 224, 224}, {1280, 720, 1008, 560}}
}

// ResizeOptions configures Resize; zero values take the defaults.
type ResizeOptions struct {
	Cases   []ResizeCase
	Reps    int    // measured repetitions per row (default 30)
	Warmup  int    // unmeasured runs first (default 3)
	Workers int    // goroutines of the banded native row (default GOMAXPROCS)
	TempDir string // for the frames handed to Python (default os.TempDir)
}

// Resize measures native Pillow-exact bicubic at every dispatch level this machine supports against
// Pillow 9.4 itself (Image.resize timed inside a /usr/bin/python3 child on the same pixels, so process
// start and the pipe are excluded) and OpenCV 4.6 INTER_CUBIC (bare cv::resize on prepared Mats,
// OpenCV's default threads), in the same run, and times the other kernels at the best level. Every
// implementation runs once per round, rounds repeated Reps times, so load changes hit all alike.
// Ratios, from medians and (the -min variants) from the fastest run of each:
//
//	x-pillow   = Pillow time / native time       (speed-up; issue target ≥ 3)
//	x-cv-cubic = native time / OpenCV cubic time (issue target ≤ 1.5)
func Resize(opt ResizeOptions) ([]Row, error) {
	if opt.Cases == nil {
		opt.Cases = DefaultResizeCases()
	}
	if opt.Reps <= 0 {
		opt.Reps = 30
	}
	if opt.Warmup <= 0 {
		opt.Warmup = 3
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	env := CurrentEnv()
	var rows []Row
	for _, c := range opt.Cases {
		rs, err := resizeCase(opt, env, c)
		if err != nil {
			return nil, err
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

// resizeVariant is one timed implementation of a case.
type resizeVariant struct {
	name  string
	run   func() error
	inner time.Duration // set by run when the time was measured elsewhere (Python)
	times []time.Duration
}

func resizeCase(opt ResizeOptions, env Env, c ResizeCase) ([]Row, error) {
	src := BenchFrame(c.SrcW, c.SrcH)
	dims := fmt.Sprintf("src=%dx%d/dst=%dx%d", c.SrcW, c.SrcH, c.DstW, c.DstH)
	vs, nNative, err := nativeVariants(opt, c, src, dims)
	if err != nil {
		return nil, err
	}
	cv, err := resize.NewCVBench(resize.CVCubic, src, c.DstW, c.DstH)
	if err != nil {
		return nil, err
	}
	defer cv.Close()
	cvVar := &resizeVariant{name: fmt.Sprintf("Resize/baseline=opencv-4.6/%s/kernel=cv-cubic/threads=%d", dims, runtime.NumCPU()),
		run: func() error { cv.Run(); return nil }}
	vs = append(vs, cvVar)
	kvs, err := kernelVariants(c, src, dims)
	if err != nil {
		return nil, err
	}
	vs = append(vs, kvs...)
	pilVar, pilFail, closePil, err := pillowVariant(opt, c, src, dims)
	if err != nil {
		return nil, err
	}
	defer closePil()
	if pilVar != nil {
		vs = append([]*resizeVariant{pilVar}, vs...)
		nNative++
	}
	if err := measureResize(vs, opt); err != nil {
		return nil, err
	}
	return resizeRows(opt, env, dims, vs, nNative, cvVar, pilVar, pilFail), nil
}

// nativeVariants are the native bicubic kernel at every dispatch level this CPU has (and on
// opt.Workers threads); nNative counts them.
func nativeVariants(opt ResizeOptions, c ResizeCase, src *rgb.Image, dims string) ([]*resizeVariant, int, error) {
	plan, err := native.NewPlan(native.Bicubic, c.SrcW, c.SrcH, c.DstW, c.DstH)
	if err != nil {
		return nil, 0, err
	}
	var vs []*resizeVariant
	for _, l := range native.Supported() {
		dst := rgb.New(c.DstW, c.DstH)
		vs = append(vs, &resizeVariant{name: fmt.Sprintf("Resize/level=%v/%s/kernel=pil-bicubic/threads=1", l, dims),
			run: func() error { return plan.ResampleLevel(l, dst, src) }})
	}
	if opt.Workers > 1 {
		dst := rgb.New(c.DstW, c.DstH)
		vs = append(vs, &resizeVariant{name: fmt.Sprintf("Resize/level=%v/%s/kernel=pil-bicubic/threads=%d", native.Best(), dims, opt.Workers),
			run: func() error { return plan.ResampleParallel(opt.Workers, dst, src) }})
	}
	return vs, len(vs), nil
}

// kernelVariants are the resize package's other kernels, one thread each.
func kernelVariants(c ResizeCase, src *rgb.Image, dims string) ([]*resizeVariant, error) {
	var vs []*resizeVariant
	for _, k := range resize.Kernels() {
		if k == resize.PILBicubic {
			continue
		}
		r, err := resize.New(k, c.SrcW, c.SrcH, c.DstW, c.DstH)
		if err != nil {
			return nil, err
		}
		dst := rgb.New(c.DstW, c.DstH)
		lv := "none" // OpenCV kernels do not use native dispatch
		if strings.HasPrefix(k, "pil-") || k == resize.TorchBicubic {
			lv = native.Best().String()
		}
		vs = append(vs, &resizeVariant{name: fmt.Sprintf("Resize/level=%s/%s/kernel=%s/threads=1", lv, dims, k),
			run: func() error { return r.Resize(dst, src) }})
	}
	return vs, nil
}

// pillowVariant is Pillow's bicubic in a Python child, timed inside Python, one call per round
// (interleaved with the rest); nil with the reason when Pillow cannot run. The caller calls done.
func pillowVariant(opt ResizeOptions, c ResizeCase, src *rgb.Image, dims string) (v *resizeVariant, fail string, done func(), err error) {
	done = func() {}
	ver, err := piloracle.Available()
	if err != nil {
		return nil, err.Error(), done, nil
	}
	dir := opt.TempDir
	if dir == "" {
		dir = os.TempDir()
	}
	tmp, err := os.MkdirTemp(dir, "framesweep-bench-resize-")
	if err != nil {
		return nil, "", done, err
	}
	timer, err := piloracle.NewTimer(tmp, piloracle.Case{Src: src, OutW: c.DstW, OutH: c.DstH, Filter: "bicubic"})
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err.Error(), done, nil
	}
	v = &resizeVariant{name: "Resize/baseline=pillow-" + ver + "/" + dims + "/kernel=bicubic/threads=1"}
	v.run = func() error {
		d, err := timer.Time()
		v.inner = d
		return err
	}
	return v, "", func() { timer.Close(); os.RemoveAll(tmp) }, nil
}

// measureResize runs every variant once per round, Warmup rounds unmeasured then Reps measured.
func measureResize(vs []*resizeVariant, opt ResizeOptions) error {
	for i := 0; i < opt.Warmup+opt.Reps; i++ {
		for _, v := range vs {
			t0 := time.Now()
			if err := v.run(); err != nil {
				return fmt.Errorf("bench resize %s: %w", v.name, err)
			}
			d := time.Since(t0)
			if v.inner > 0 { // timed inside Python: excludes the pipe round trip
				d, v.inner = v.inner, 0
			}
			if i >= opt.Warmup {
				v.times = append(v.times, d)
			}
		}
	}
	return nil
}

// resizeRows are the rows of one case: Pillow, OpenCV, then every other variant; the first nNative
// variants (Pillow's included) get their ratios to Pillow and OpenCV.
func resizeRows(opt ResizeOptions, env Env, dims string, vs []*resizeVariant, nNative int, cvVar, pilVar *resizeVariant, pilFail string) []Row {
	row := func(name string, ts []time.Duration) Row {
		r := Row{Name: name, Mode: "resize", Iterations: len(ts), Warmup: opt.Warmup, Env: env}
		if len(ts) > 0 {
			med := resizeMedian(ts)
			r.Seconds = med.Seconds()
			r.Metrics = append(r.Metrics, Metric{"frames/s", 1 / med.Seconds()}, Metric{"min-s", slices.Min(ts).Seconds()})
		}
		return r
	}
	var rows []Row
	pil := Row{Name: "Resize/baseline=pillow/" + dims + "/kernel=bicubic/threads=1", Mode: "resize", Env: env, Failure: pilFail}
	if pilVar != nil {
		pil = row(pilVar.name, pilVar.times)
	}
	rows = append(rows, pil)
	cvRow := row(cvVar.name, cvVar.times)
	rows = append(rows, cvRow)
	for i, v := range vs {
		if v == cvVar || v == pilVar {
			continue
		}
		r := row(v.name, v.times)
		if i < nNative {
			rmin := slices.Min(v.times).Seconds()
			if pilVar != nil {
				r.Metrics = append(r.Metrics, Metric{"x-pillow", pil.Seconds / r.Seconds},
					Metric{"x-pillow-min", slices.Min(pilVar.times).Seconds() / rmin})
			}
			r.Metrics = append(r.Metrics, Metric{"x-cv-cubic", r.Seconds / cvRow.Seconds},
				Metric{"x-cv-cubic-min", rmin / slices.Min(cvVar.times).Seconds()})
		}
		rows = append(rows, r)
	}
	return rows
}

func resizeMedian(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchFrame is the deterministic w×h test frame every resize implementation gets: smooth colour
// gradients, hard edges and mild noise (resampling cost does not depend on content; this keeps the
// outputs meaningful to look at and identical across runs).
func BenchFrame(w, h int) *rgb.Image {
	r := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	m := rgb.New(w, h)
	for y := 0; y < h; y++ {
		row := m.Row(y)
		for x := 0; x < w; x++ {
			edge := 0
			if (x/97+y/61)%2 == 0 {
				edge = 60
			}
			row[3*x] = byte(min(255, x*200/w+edge/2+r.IntN(8)))
			row[3*x+1] = byte(min(255, y*200/h+edge/3+r.IntN(8)))
			row[3*x+2] = byte(min(255, (x+y)*150/(w+h)+edge+r.IntN(8)))
		}
	}
	return m
}
