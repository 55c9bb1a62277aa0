package geom

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// aspectKept is SolveIso's definition: some scale ρ puts both sides within f/2 of ρ·src.
func aspectKept(w, h, srcW, srcH, f int) bool {
	lo := math.Max((float64(w)-float64(f)/2)/float64(srcW), (float64(h)-float64(f)/2)/float64(srcH))
	hi := math.Min((float64(w)+float64(f)/2)/float64(srcW), (float64(h)+float64(f)/2)/float64(srcH))
	return lo <= hi
}

// TestIsoTolerance is the solver's property test: every allocation is a multiple of the factor, keeps
// the aspect, lies within the tolerance, reports its error truthfully, and no aspect-kept size (found by
// brute force) is closer to the budget; when the solver refuses, none is within tolerance.
func TestIsoTolerance(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 7))
	srcs := []Size{p1080, p720, p480, p360, port, {1000, 1000}, {3840, 1600}}
	for it := 0; it < 300; it++ {
		src := srcs[r.IntN(len(srcs))]
		if it%3 == 0 {
			src = Size{16 + r.IntN(4000), 16 + r.IntN(4000)}
		}
		budget := 1e6 + r.Float64()*3e7
		n := []int{8, 16, 32, 64, 128, 256}[r.IntN(6)]
		f := []int{14, 28, 32}[r.IntN(3)]
		tol := []float64{0.01, 0.05, 0.10, 0.2}[r.IntN(4)]
		a, err := SolveIso(budget, n, src.W, src.H, f, tol)
		// Brute force over every (kw, kh) with a total below 2× the budget.
		bestAbs := math.Inf(1)
		for kh := 1; float64(n)*float64(f)*float64(kh*f) <= 2*budget; kh++ {
			for kw := 1; float64(n)*float64(kw*f)*float64(kh*f) <= 2*budget; kw++ {
				if aspectKept(kw*f, kh*f, src.W, src.H, f) {
					bestAbs = math.Min(bestAbs, math.Abs(float64(n*kw*f*kh*f)-budget))
				}
			}
		}
		if err != nil {
			if !errors.Is(err, ErrTolerance) {
				t.Fatalf("budget %v n %d src %v f %d: %v", budget, n, src, f, err)
			}
			if bestAbs <= tol*budget {
				t.Fatalf("budget %v n %d src %v f %d tol %v: refused, but a size %v off exists", budget, n, src, f, tol, bestAbs)
			}
			continue
		}
		if a.W%f != 0 || a.H%f != 0 || a.W <= 0 || a.H <= 0 {
			t.Fatalf("%+v not a positive multiple of %d", a, f)
		}
		if !aspectKept(a.W, a.H, src.W, src.H, f) {
			t.Fatalf("%+v does not keep the aspect of %v", a, src)
		}
		if a.Pixels != int64(n)*int64(a.W)*int64(a.H) || math.Abs(a.RelErr-(float64(a.Pixels)-budget)/budget) > 1e-15 {
			t.Fatalf("%+v: inconsistent pixels or error", a)
		}
		if math.Abs(a.RelErr) > tol {
			t.Fatalf("%+v outside tolerance %v", a, tol)
		}
		if got := math.Abs(float64(a.Pixels) - budget); got > bestAbs {
			t.Fatalf("budget %v n %d src %v f %d: solver %+v (|err| %v) but brute force finds %v", budget, n, src, f, a, got, bestAbs)
		}
		b, _ := SolveIso(budget, n, src.W, src.H, f, tol)
		if b != a {
			t.Fatalf("not deterministic: %+v vs %+v", a, b)
		}
	}
}

// TestIsoGolden pins the allocations for the brief's budget (9.7 M pixels at 32/64/128 frames).
func TestIsoGolden(t *testing.T) {
	got, err := SolveIsoAll(9.7e6, []int{32, 64, 128}, 1920, 1080, 28, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range got {
		t.Logf("%d frames: %dx%d, %d pixels, %+.2f%%", a.Frames, a.W, a.H, a.Pixels, 100*a.RelErr)
		if math.Abs(a.RelErr) > DefaultIsoTolerance || a.W%28 != 0 || a.H%28 != 0 {
			t.Errorf("%+v", a)
		}
	}
	want := []Size{{728, 420}, {532, 280}, {364, 196}}
	for i, a := range got {
		if (Size{a.W, a.H}) != want[i] {
			t.Errorf("%d frames: %dx%d, want %v", a.Frames, a.W, a.H, want[i])
		}
	}
	// The geometry form gives the same sizes through Layout.
	g := mustParse(t, "iso:9.7e6")
	for i, n := range []int{32, 64, 128} {
		l, err := g.Layout(1920, 1080, n)
		if err != nil || l.Resize != want[i] {
			t.Errorf("iso:9.7e6 %d frames: %v %v", n, l.Resize, err)
		}
	}
	if _, err := SolveIso(9.7e6, 64, 1920, 1080, 28, 0.01); !errors.Is(err, ErrTolerance) {
		t.Errorf("tol 1%%: %v", err)
	}
	for _, bad := range []struct {
		b    float64
		n, f int
		tol  float64
	}{{0, 32, 28, 0}, {math.NaN(), 32, 28, 0}, {1e7, 0, 28, 0}, {1e7, 32, 0, 0}, {1e7, 32, 28, 1.5}, {1e7, 32, 28, -1}} {
		if _, err := SolveIso(bad.b, bad.n, 1920, 1080, bad.f, bad.tol); err == nil {
			t.Errorf("SolveIso(%v, %d, f=%d, tol=%v) accepted", bad.b, bad.n, bad.f, bad.tol)
		}
	}
}
