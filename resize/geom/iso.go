package geom

import (
	"math"
	"strconv"
	"strings"
)

// Iso-compute allocation: give every frame count the per-frame size that spends (about) the same total
// pixel budget, so a sweep over frame counts compares configurations of equal vision compute.

// DefaultIsoTolerance is the default relative tolerance on n·W·H against the budget. At factor 28 and
// budgets of ~10 M pixels the closest aspect-kept size is typically within ±7 %, so 10 % always leaves a
// choice for 16:9 and 4:3 sources at 32–128 frames; pass a tighter one to refuse coarse matches.
const DefaultIsoTolerance = 0.10

// Allocation is the iso-compute size chosen for one frame count.
type Allocation struct {
	Frames int     `json:"frames"`
	W      int     `json:"w"`
	H      int     `json:"h"`
	Pixels int64   `json:"pixels"`  // Frames·W·H
	RelErr float64 `json:"rel_err"` // (Pixels − budget) / budget
}

// Iso is the iso-compute policy as a Geometry: the per-frame size for nFrames frames from SolveIso.
type Iso struct {
	Budget    float64 // total pixels over all frames, e.g. 9.7e6
	Factor    int     // both sides are multiples of it (28 for Qwen2.5-VL, 32 for Qwen3-VL)
	Tolerance float64 // relative; 0 means DefaultIsoTolerance
}

func (g Iso) String() string {
	s := "iso:" + ftoa(g.Budget)
	var opts []string
	if g.Factor != 28 {
		opts = append(opts, "factor="+itoa(g.Factor))
	}
	if g.Tolerance != 0 && g.Tolerance != DefaultIsoTolerance {
		opts = append(opts, "tol="+ftoa(g.Tolerance))
	}
	if len(opts) > 0 {
		s += "," + strings.Join(opts, ",")
	}
	return s
}

func (g Iso) Layout(srcW, srcH, nFrames int) (Layout, error) {
	if err := checkSrc(g, srcW, srcH); err != nil {
		return Layout{}, err
	}
	a, err := SolveIso(g.Budget, nFrames, srcW, srcH, g.Factor, g.Tolerance)
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Spec = g.String()
		}
		return Layout{}, err
	}
	out := Size{a.W, a.H}
	if err := checkOut(g, out); err != nil {
		return Layout{}, err
	}
	return Layout{Src: Size{srcW, srcH}, Resize: out, TokenFrames: 1}, nil
}

// SolveIso chooses, for n frames of a srcW×srcH source, the size W×H (both multiples of factor, aspect
// kept) whose total n·W·H is closest to budget, and fails with ErrTolerance when even that one is more
// than tol (relative) away. tol ≤ 0 means DefaultIsoTolerance.
//
// "Aspect kept" means what smart_resize means by it: there is one scale ρ such that each side is within
// half a factor step of the exactly scaled side, |W − ρ·srcW| ≤ f/2 and |H − ρ·srcH| ≤ f/2. Ties in
// |error| go to the smaller total, then the smaller H: the result is deterministic.
func SolveIso(budget float64, n, srcW, srcH, factor int, tol float64) (Allocation, error) {
	spec := "iso:" + ftoa(budget)
	switch {
	case !(budget >= 1) || budget > 1e15:
		return Allocation{}, errf("iso", spec, ErrBadSpec, "budget %v", budget)
	case factor < 1 || factor > 4096:
		return Allocation{}, errf("iso", spec, ErrBadSpec, "factor %d", factor)
	case n < 1 || n > MaxFrames:
		return Allocation{}, errf("iso", spec, ErrFrames, "%d frames", n)
	case budget/float64(n) > MaxOutputPixels:
		return Allocation{}, errf("iso", spec, ErrTooLarge, "%v pixels per frame", budget/float64(n))
	case srcW < 1 || srcH < 1 || srcW > MaxSide || srcH > MaxSide:
		return Allocation{}, errf("iso", spec, ErrSize, "%dx%d", srcW, srcH)
	case tol != tol || tol < 0 || tol >= 1:
		return Allocation{}, errf("iso", spec, ErrBadSpec, "tolerance %v", tol)
	}
	if tol == 0 {
		tol = DefaultIsoTolerance
	}
	f := float64(factor)
	sw, sh := float64(srcW), float64(srcH)
	nf := float64(n)
	best := Allocation{Frames: n}
	bestAbs := math.Inf(1)
	// For each height step kh, the scales that keep H = kh·f are ρ ∈ [(kh−½)f/sh, (kh+½)f/sh]; the widths
	// compatible with some ρ in that interval are kw with [(kw−½)f/sw, (kw+½)f/sw] overlapping it.
	for kh := 1; ; kh++ {
		lo := (float64(kh) - 0.5) * f / sh
		hi := (float64(kh) + 0.5) * f / sh
		kwLo := max(1, int(math.Ceil(lo*sw/f-0.5)))
		kwHi := int(math.Floor(hi*sw/f + 0.5))
		h := kh * factor
		// The smallest total of this row grows with kh: once it is further above the budget than the best
		// error so far, no later row can win (ties go to the smaller total).
		if nf*float64(kwLo*factor)*float64(h)-budget > bestAbs || h > MaxOutputPixels {
			break
		}
		for kw := kwLo; kw <= kwHi; kw++ {
			w := kw * factor
			px := int64(n) * int64(w) * int64(h)
			d := float64(px) - budget
			ad := math.Abs(d)
			if ad < bestAbs || (ad == bestAbs && px < best.Pixels) {
				bestAbs = ad
				best = Allocation{Frames: n, W: w, H: h, Pixels: px, RelErr: d / budget}
			}
		}
	}
	if best.W == 0 || bestAbs > tol*budget {
		return best, errf("iso", spec, ErrTolerance, "closest for %d frames of %dx%d is %dx%d, %+.2f%% off (tolerance %.2f%%)",
			n, srcW, srcH, best.W, best.H, 100*best.RelErr, 100*tol)
	}
	return best, nil
}

// SolveIsoAll runs SolveIso for each frame count, in order.
func SolveIsoAll(budget float64, frames []int, srcW, srcH, factor int, tol float64) ([]Allocation, error) {
	out := make([]Allocation, 0, len(frames))
	for _, n := range frames {
		a, err := SolveIso(budget, n, srcW, srcH, factor, tol)
		if err != nil {
			return out, err
		}
		out = append(out, a)
	}
	return out, nil
}

func itoa(v int) string { return strconv.Itoa(v) }

// ftoa prints a float the shortest way that parses back to the same value.
func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
