package native

import (
	"math"
	"sync"

	"github.com/framesweep/framesweep/rgb"
)

// Filter is a Pillow resampling filter.
type Filter int

const (
	Bilinear Filter = iota // Pillow Image.BILINEAR (support 1)
	Bicubic                // Pillow Image.BICUBIC, Keys cubic a = -0.5 (support 2)
	Lanczos                // Pillow Image.LANCZOS, 3-lobed (support 3)
)

func (f Filter) String() string {
	switch f {
	case Bilinear:
		return "bilinear"
	case Bicubic:
		return "bicubic"
	case Lanczos:
		return "lanczos"
	}
	return "filter(?)"
}

// precisionBits is Pillow's PRECISION_BITS: 8 bits of result, 2 for overflow and sign, 22 of fraction.
const precisionBits = 32 - 8 - 2

// Pillow's filters, in double as in Resample.c. Products are wrapped in float64() so the Go compiler
// cannot fuse them into FMAs, which would change the last bit (Pillow's build does not use FMA).
func bilinearFilter(x float64) float64 {
	if x < 0 {
		x = -x
	}
	if x < 1 {
		return 1 - x
	}
	return 0
}

func bicubicFilter(x float64) float64 {
	const a = -0.5
	if x < 0 {
		x = -x
	}
	if x < 1 {
		return float64(float64(float64((a+2.0)*x)-(a+3.0))*x*x) + 1
	}
	if x < 2 {
		return float64(float64(float64(float64(float64(x-5)*x)+8)*x)-4) * a
	}
	return 0
}

func sincFilter(x float64) float64 {
	if x == 0 {
		return 1
	}
	x = float64(x * math.Pi)
	return math.Sin(x) / x
}

func lanczosFilter(x float64) float64 {
	if -3 <= x && x < 3 {
		return float64(sincFilter(x) * sincFilter(x/3))
	}
	return 0
}

func (f Filter) fn() (func(float64) float64, float64) {
	switch f {
	case Bilinear:
		return bilinearFilter, 1
	case Bicubic:
		return bicubicFilter, 2
	case Lanczos:
		return lanczosFilter, 3
	}
	return nil, 0
}

// axis holds one pass's coefficients exactly as Pillow's precompute_coeffs + normalize_coeffs_8bpc
// produce them: for output i, taps start[i] .. start[i]+n[i]-1 with 22-bit fixed-point weights
// k[i*ksize : i*ksize+n[i]].
type axis struct {
	ksize int
	start []int32
	n     []int32
	k     []int32
}

// precompute mirrors Pillow's precompute_coeffs for box (0, inSize) and normalize_coeffs_8bpc.
func precompute(f Filter, inSize, outSize int) axis {
	filter, fsupport := f.fn()
	scale := float64(float32(inSize)) / float64(outSize) // (double)(in1 - in0) / outSize, in1-in0 in float
	filterscale := scale
	if filterscale < 1 {
		filterscale = 1
	}
	support := fsupport * filterscale
	ksize := int(math.Ceil(support))*2 + 1
	a := axis{ksize: ksize, start: make([]int32, outSize), n: make([]int32, outSize), k: make([]int32, outSize*ksize)}
	w := make([]float64, ksize)
	for xx := 0; xx < outSize; xx++ {
		center := float64((float64(xx) + 0.5) * scale)
		ss := 1.0 / filterscale
		xmin := int(center - support + 0.5) // C truncation toward zero, as Pillow
		if xmin < 0 {
			xmin = 0
		}
		xmax := int(center + support + 0.5)
		if xmax > inSize {
			xmax = inSize
		}
		xmax -= xmin
		ww := 0.0
		for x := 0; x < xmax; x++ {
			v := filter(float64((float64(x+xmin) - center + 0.5) * ss))
			w[x] = v
			ww += v
		}
		k := a.k[xx*ksize : xx*ksize+ksize]
		for x := 0; x < xmax; x++ {
			v := w[x]
			if ww != 0 {
				v /= ww
			}
			if v < 0 {
				k[x] = int32(-0.5 + float64(v*(1<<precisionBits)))
			} else {
				k[x] = int32(0.5 + float64(v*(1<<precisionBits)))
			}
		}
		a.start[xx] = int32(xmin)
		a.n[xx] = int32(xmax)
	}
	return a
}

// Plan is a precomputed Pillow resample from inW×inH to outW×outH with one filter. It holds only Go
// memory and is safe for concurrent use by several goroutines.
type Plan struct {
	Filter            Filter
	InW, InH          int
	OutW, OutH        int
	needH, needV      bool
	h, v              axis
	rowFirst, rowLast int     // source rows the vertical pass reads: [rowFirst, rowLast)
	vStartShift       []int32 // v.start - rowFirst (rows of the horizontal pass's output)
	simd              simdCoeffs
}

// tmpPool holds the horizontal pass's intermediate buffers for every Plan: one pool, not one per
// Plan, so a process resizing to many sizes (a grid of resolutions) keeps a few buffers of the
// largest size instead of a few per size.
var tmpPool sync.Pool

// NewPlan precomputes a resample. Sizes must be positive and at most 1<<15 per side.
func NewPlan(f Filter, inW, inH, outW, outH int) (*Plan, error) {
	if fn, _ := f.fn(); fn == nil {
		return nil, errf("resample", ErrBadArgument, "unknown filter %d", int(f))
	}
	const maxSide = 1 << 15
	for _, s := range []int{inW, inH, outW, outH} {
		if s <= 0 || s > maxSide {
			return nil, errf("resample", ErrBadSize, "%dx%d -> %dx%d (each side must be 1..%d)", inW, inH, outW, outH, maxSide)
		}
	}
	p := &Plan{Filter: f, InW: inW, InH: inH, OutW: outW, OutH: outH}
	// Pillow's need_horizontal / need_vertical for the default box (0, 0, inW, inH).
	p.needH = outW != inW
	p.needV = outH != inH
	p.v = precompute(f, inH, outH)
	p.rowFirst = int(p.v.start[0])
	p.rowLast = int(p.v.start[outH-1] + p.v.n[outH-1])
	p.vStartShift = make([]int32, outH)
	for i := range p.vStartShift {
		p.vStartShift[i] = p.v.start[i] - int32(p.rowFirst)
	}
	if p.needH {
		p.h = precompute(f, inW, outW)
		p.simd = buildSIMDCoeffs(p.h)
	}
	return p, nil
}

func (p *Plan) check(dst, src *rgb.Image) error {
	if err := src.Validate(); err != nil {
		return errf("resample", ErrBadSize, "source: %v", err)
	}
	if err := dst.Validate(); err != nil {
		return errf("resample", ErrBadSize, "destination: %v", err)
	}
	if src.W != p.InW || src.H != p.InH || dst.W != p.OutW || dst.H != p.OutH {
		return errf("resample", ErrBadSize, "plan is %dx%d -> %dx%d, got %dx%d -> %dx%d",
			p.InW, p.InH, p.OutW, p.OutH, src.W, src.H, dst.W, dst.H)
	}
	return nil
}

// Resample resizes src into dst (sizes as the plan) with the current dispatch level; the result is
// byte-identical to Pillow 9.4's Image.resize((OutW, OutH), filter) of the same RGB image.
func (p *Plan) Resample(dst, src *rgb.Image) error {
	return p.run(CurrentLevel(), 1, dst, src)
}

// ResampleLevel is Resample at an explicit level (a level above Best falls back to Generic).
func (p *Plan) ResampleLevel(l Level, dst, src *rgb.Image) error {
	return p.run(l, 1, dst, src)
}

// ResampleParallel is Resample split into row bands over up to workers goroutines (each pass is
// banded, with a barrier between them); the bytes are the same as Resample's.
func (p *Plan) ResampleParallel(workers int, dst, src *rgb.Image) error {
	return p.run(CurrentLevel(), workers, dst, src)
}

func (p *Plan) run(l Level, workers int, dst, src *rgb.Image) error {
	if err := p.check(dst, src); err != nil {
		return err
	}
	if l > best || l < Generic {
		l = Generic
	}
	switch {
	case !p.needH && !p.needV: // Pillow returns a copy
		for y := 0; y < src.H; y++ {
			copy(dst.Row(y), src.Row(y))
		}
		return nil
	case !p.needV:
		p.hBands(l, workers, dst, src, 0, src.H)
		return nil
	case !p.needH:
		p.vBands(l, workers, dst, src, p.v.start)
		return nil
	}
	rows := p.rowLast - p.rowFirst
	tmp := p.getTmp(rows)
	defer tmpPool.Put(&tmp.Pix)
	p.hBands(l, workers, tmp, src, p.rowFirst, rows)
	p.vBands(l, workers, dst, tmp, p.vStartShift)
	return nil
}

func (p *Plan) getTmp(rows int) *rgb.Image {
	n := 3 * p.OutW * rows
	if b, ok := tmpPool.Get().(*[]byte); ok && cap(*b) >= n {
		return &rgb.Image{W: p.OutW, H: rows, Stride: 3 * p.OutW, Pix: (*b)[:n]}
	}
	return rgb.New(p.OutW, rows)
}

// band returns rows [a, b) of m as an image sharing m's pixels.
func band(m *rgb.Image, a, b int) rgb.Image {
	return rgb.Image{W: m.W, H: b - a, Stride: m.Stride, Pix: m.Pix[a*m.Stride:]}
}

// split calls f on workers contiguous bands of [0, n) concurrently and waits (workers ≥ 2).
func split(workers, n int, f func(a, b int)) {
	workers = min(workers, n)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		a, b := i*n/workers, (i+1)*n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(a, b)
		}()
	}
	wg.Wait()
}

// hBands: dst row y is source row firstRow+y filtered horizontally, for y in [0, rows).
func (p *Plan) hBands(l Level, workers int, dst, src *rgb.Image, firstRow, rows int) {
	if workers <= 1 || rows < 2 {
		p.hBand(l, dst, src, firstRow, 0, rows) // no closure: keeps the serial path allocation-free
		return
	}
	split(workers, rows, func(a, b int) { p.hBand(l, dst, src, firstRow, a, b) })
}

func (p *Plan) hBand(l Level, dst, src *rgb.Image, firstRow, a, b int) {
	d := band(dst, a, b)
	if l == Generic || !haveAsm {
		horizontalGeneric(&p.h, &d, src, firstRow+a, b-a)
		return
	}
	horizontalAsm(l, p, &d, src, firstRow+a, b-a)
}

// vBands: dst row yy mixes src rows start[yy] … start[yy]+n[yy]-1.
func (p *Plan) vBands(l Level, workers int, dst, src *rgb.Image, start []int32) {
	if workers <= 1 || dst.H < 2 {
		p.vBand(l, dst, src, start, 0, dst.H)
		return
	}
	split(workers, dst.H, func(a, b int) { p.vBand(l, dst, src, start, a, b) })
}

func (p *Plan) vBand(l Level, dst, src *rgb.Image, start []int32, a, b int) {
	v := &p.v
	d := band(dst, a, b)
	n, k := v.n[a:b], v.k[a*v.ksize:b*v.ksize]
	if l == Generic || !haveAsm {
		verticalGeneric(start[a:b], n, k, v.ksize, &d, src)
		return
	}
	verticalAsm(l, start[a:b], n, k, v.ksize, &d, src)
}

// simdCoeffs are the horizontal weights laid out for the vector kernels (see resample_amd64.c): per
// output pixel, groups of four taps; per group 16 int16 "lo" words then 16 "hi" words, where each weight
// k = hi<<15 + lo exactly, placed as [k0 k1 k0 k1 k0 k1 0 0 | k2 k3 k2 k3 k2 k3 0 0] (zero-padded).
type simdCoeffs struct {
	groups []int16
	n, off []int32 // groups per output pixel, index of its first group
}

func buildSIMDCoeffs(a axis) simdCoeffs {
	var s simdCoeffs
	out := len(a.n)
	s.n, s.off = make([]int32, out), make([]int32, out)
	for i := 0; i < out; i++ {
		n := int(a.n[i])
		k := a.k[i*a.ksize : i*a.ksize+n]
		ng := (n + 3) / 4
		s.n[i], s.off[i] = int32(ng), int32(len(s.groups)/32)
		for g := 0; g < ng; g++ {
			var lo, hi [16]int16
			for t := 0; t < 4; t++ {
				j := 4*g + t
				if j >= n {
					continue
				}
				l, h := int16(k[j]&0x7fff), int16(k[j]>>15)
				base := 8*(t/2) + t%2 // lane t/2, word t%2 of each pair
				for c := 0; c < 3; c++ {
					lo[base+2*c], hi[base+2*c] = l, h
				}
			}
			s.groups = append(s.groups, lo[:]...)
			s.groups = append(s.groups, hi[:]...)
		}
	}
	return s
}
