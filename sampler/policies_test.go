package sampler

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// exactRound is round-half-even of i·(N-1)/(n-1) in exact integer arithmetic.
func exactRound(N, n int) []int {
	out := make([]int, n)
	if n == 1 {
		return out
	}
	d := int64(n - 1)
	for i := range out {
		num := int64(i) * int64(N-1)
		q, r := num/d, num%d
		switch {
		case 2*r > d, 2*r == d && q%2 == 1:
			q++
		}
		out[i] = int(q)
	}
	return out
}

// SAMPLING.md §1: for N ≤ 7200 every float32 linspace variant agrees with exact rational rounding.
func TestTorchLinspaceAgreesWithExactRounding(t *testing.T) {
	budgets := []int{2, 4, 8, 16, 32, 64, 128, 256, 512, 768}
	checked := 0
	for N := 2; N <= 7200; N += 7 {
		for _, n := range budgets {
			if n > N {
				break
			}
			want := exactRound(N, n)
			for _, tv := range []Torch{Torch2, Torch2NoFMA, Torch113AVX2, Torch113AVX512} {
				if got := roundLinspaceF32(N, n, tv); !slices.Equal(got, want) {
					t.Fatalf("N=%d n=%d torch %s: got %v want %v", N, n, tv, got, want)
				}
			}
			checked++
		}
	}
	t.Logf("%d (N, n) pairs agree", checked)
}

func TestTorchLinspaceShape(t *testing.T) {
	if got := TorchLinspace(0, 10, 1, Torch2); !slices.Equal(got, []float32{0}) {
		t.Fatalf("steps=1: %v", got)
	}
	if got := TorchLinspace(0, 10, 0, Torch2); got != nil {
		t.Fatalf("steps=0: %v", got)
	}
	// The vectorised kernel takes lanes from the block base: in float32 that is visible on
	// long ranges, and the scalar tail must still end exactly at end.
	for _, tv := range []Torch{Torch2, Torch2NoFMA, Torch113AVX2, Torch113AVX512} {
		ys := TorchLinspace(0, 107999, 768, tv)
		if ys[0] != 0 || ys[767] != 107999 {
			t.Fatalf("%s endpoints %v %v", tv, ys[0], ys[767])
		}
	}
	a := TorchLinspace(0, 107999, 768, Torch2)
	b := TorchLinspace(0, 107999, 768, Torch113AVX2)
	diff := 0
	for i := range a {
		if a[i] != b[i] {
			diff++
		}
	}
	if diff == 0 {
		t.Fatal("vectorised and scalar float32 kernels agree everywhere on a 1-hour video: emulation not exercised")
	}
}

func TestNumpyLinspaceEdges(t *testing.T) {
	if got := NumpyLinspace(3, 9, 1); !slices.Equal(got, []float64{3}) {
		t.Fatal(got)
	}
	if got := NumpyLinspace(0, 0, 3); !slices.Equal(got, []float64{0, 0, 0}) {
		t.Fatal(got)
	}
	if got := NumpyLinspace(0, 1, 3); !slices.Equal(got, []float64{0, 0.5, 1}) {
		t.Fatal(got)
	}
}

// Reference values of SplitMix64 from state 0 (Vigna's splitmix64.c), so a seed is portable.
func TestSplitMix64Reference(t *testing.T) {
	r := splitMix64{}
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	for i, w := range want {
		if got := r.next(); got != w {
			t.Fatalf("output %d = %#x, want %#x", i, got, w)
		}
	}
}

func TestPolicyTable(t *testing.T) {
	v100 := Video{Frames: 100, FPS: 25}
	cases := []struct {
		policy string
		v      Video
		r      Request
		want   []int
		err    error
	}{
		{"uniform", v100, Request{Frames: 4}, []int{0, 33, 66, 99}, nil},
		{"uniform-round64", v100, Request{Frames: 4}, []int{0, 33, 66, 99}, nil},
		{"uniform-floor", v100, Request{Frames: 4}, []int{0, 33, 66, 99}, nil},
		{"uniform-floor", v100, Request{Frames: 3}, []int{0, 49, 99}, nil},
		{"uniform", v100, Request{Frames: 3}, []int{0, 50, 99}, nil},
		{"uniform-mid", v100, Request{Frames: 4}, []int{12, 37, 62, 86}, nil},
		{"uniform-interior", v100, Request{Frames: 4}, []int{20, 40, 60, 80}, nil},
		{"uniform-left", v100, Request{Frames: 4}, []int{0, 25, 50, 75}, nil},
		{"nested", v100, Request{Frames: 3}, []int{0, 33, 66}, nil},
		{"dense-start", v100, Request{Frames: 3}, []int{0, 1, 2}, nil},
		{"dense-start", v100, Request{Frames: 3, SampleFPS: 2}, []int{0, 12, 25}, nil},
		{"fps", v100, Request{SampleFPS: 1}, []int{0, 25, 50, 75}, nil},
		{"fps", v100, Request{SampleFPS: 0.1, MinFrames: 2}, []int{0, 50}, nil},
		{"fps", v100, Request{SampleFPS: 10, Frames: 5}, []int{0, 20, 40, 60, 80}, nil},
		{"fps", Video{Frames: 3, FPS: 25}, Request{SampleFPS: 100}, []int{0, 1, 2}, nil},
		{"fps", Video{Frames: 100, FPS: 25, DurationS: 8}, Request{SampleFPS: 0.5}, []int{0, 25, 50, 75}, nil},
		// n = 1 and N = 1
		{"uniform", v100, Request{Frames: 1}, []int{0}, nil},
		{"uniform-mid", v100, Request{Frames: 1}, []int{49}, nil},
		{"uniform-interior", v100, Request{Frames: 1}, []int{50}, nil},
		{"uniform-left", Video{Frames: 1, FPS: 1}, Request{Frames: 1}, []int{0}, nil},
		{"random", Video{Frames: 1, FPS: 1}, Request{Frames: 1, Seed: 9}, []int{0}, nil},
		{"random-segment", Video{Frames: 3, FPS: 1}, Request{Frames: 3, Seed: 9}, []int{0, 1, 2}, nil},
		{"random-iid", Video{Frames: 1, FPS: 1}, Request{Frames: 3}, []int{0, 0, 0}, nil},
		// N < n: strict policies refuse
		{"uniform", Video{Frames: 3, FPS: 1}, Request{Frames: 4}, nil, ErrBudget},
		{"uniform-floor", Video{Frames: 3, FPS: 1}, Request{Frames: 4}, nil, ErrBudget},
		{"uniform-left", Video{Frames: 3, FPS: 1}, Request{Frames: 4}, nil, ErrBudget},
		{"random", Video{Frames: 3, FPS: 1}, Request{Frames: 4}, nil, ErrBudget},
		{"random-segment", Video{Frames: 3, FPS: 1}, Request{Frames: 4}, nil, ErrBudget},
		{"dense-start", Video{Frames: 3, FPS: 1}, Request{Frames: 4}, nil, ErrBudget},
		{"dense-start", v100, Request{Frames: 10, SampleFPS: 2}, nil, ErrBudget},
		{"dense-start", v100, Request{Frames: 2, SampleFPS: 50}, nil, ErrRequest},
		{"uniform", v100, Request{}, nil, ErrRequest},
		{"uniform", v100, Request{Frames: 4, SampleFPS: 1}, nil, ErrRequest},
		{"fps", v100, Request{Frames: 4}, nil, ErrRequest},
		{"fps", v100, Request{SampleFPS: 1, MinFrames: 5, MaxFrames: 4}, nil, ErrRequest},
		{"uniform", Video{Frames: 10, FPS: -1}, Request{Frames: 2}, nil, ErrVideo},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%+v/%+v", c.policy, c.v, c.r), func(t *testing.T) {
			s, err := LookupPolicy(c.policy)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Select(c.v, c.r)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Indices, c.want) || p.Policy != c.policy {
				t.Fatalf("got %v (%s), want %v", p.Indices, p.Policy, c.want)
			}
		})
	}
}

func TestRandomPolicies(t *testing.T) {
	v := Video{Frames: 1000, FPS: 30}
	for _, name := range []string{"random", "random-iid", "random-segment"} {
		a := mustPlan(t, name, v, Request{Frames: 64, Seed: 7})
		b := mustPlan(t, name, v, Request{Frames: 64, Seed: 7})
		c := mustPlan(t, name, v, Request{Frames: 64, Seed: 8})
		if !slices.Equal(a.Indices, b.Indices) {
			t.Fatalf("%s not reproducible", name)
		}
		if slices.Equal(a.Indices, c.Indices) {
			t.Fatalf("%s: seeds 7 and 8 give the same frames", name)
		}
		if !slices.IsSorted(a.Indices) || len(a.Indices) != 64 {
			t.Fatalf("%s: %v", name, a.Indices)
		}
	}
	// random: distinct frames, also when n = N.
	p := mustPlan(t, "random", Video{Frames: 50, FPS: 1}, Request{Frames: 50, Seed: 3})
	if !slices.Equal(p.Indices, seq(0, 50)) {
		t.Fatalf("n = N must take every frame: %v", p.Indices)
	}
	// random-segment: exactly one frame in each segment.
	p = mustPlan(t, "random-segment", v, Request{Frames: 64, Seed: 1})
	for i, x := range p.Indices {
		if lo, hi := i*1000/64, (i+1)*1000/64; x < lo || x >= hi {
			t.Fatalf("frame %d = %d outside segment [%d, %d)", i, x, lo, hi)
		}
	}
	// The sampler is unbiased enough that all frames of a small video get drawn.
	hits := map[int]bool{}
	for seed := uint64(0); seed < 200; seed++ {
		for _, x := range mustPlan(t, "random", Video{Frames: 20, FPS: 1}, Request{Frames: 2, Seed: seed}).Indices {
			hits[x] = true
		}
	}
	if len(hits) != 20 {
		t.Fatalf("only %d of 20 frames ever drawn", len(hits))
	}
}

// Properties of every sampler on a spread of videos and budgets: in range, non-decreasing (every
// upstream here returns sorted indices), timestamps consistent, reproducible.
func TestSamplerProperties(t *testing.T) {
	videos := []Video{{Frames: 1, FPS: 30}, {Frames: 2, FPS: 24}, {Frames: 17, FPS: 30}, {Frames: 301, FPS: 29.97},
		{Frames: 1800, FPS: 30}, {Frames: 7201, FPS: 59.94}, {Frames: 108000, FPS: 30}}
	reqs := []Request{{Frames: 1}, {Frames: 2}, {Frames: 8}, {Frames: 16, Seed: 5}, {Frames: 33}, {Frames: 768},
		{SampleFPS: 0.5}, {SampleFPS: 1}, {SampleFPS: 2}, {Frames: 16, ForceLast: true}, {}}
	for _, name := range Names() {
		s, _ := Lookup(name)
		for _, v := range videos {
			for _, r := range reqs {
				p, err := s.Select(v, r)
				if err != nil {
					var e *Error
					if !errors.As(err, &e) || !(errors.Is(err, ErrBudget) || errors.Is(err, ErrRequest)) {
						t.Fatalf("%s %+v %+v: untyped error %v", name, v, r, err)
					}
					continue
				}
				if !slices.IsSorted(p.Indices) {
					t.Fatalf("%s %+v %+v: not sorted %v", name, v, r, p.Indices)
				}
				for _, x := range p.Indices {
					if x < 0 || x >= v.Frames {
						t.Fatalf("%s %+v %+v: index %d out of range", name, v, r, x)
					}
				}
				if len(p.TimestampsS) != len(p.Indices) || p.Name() != name {
					t.Fatalf("%s: plan %+v", name, p)
				}
				q, err := s.Select(v, r)
				if err != nil || !slices.Equal(p.Indices, q.Indices) {
					t.Fatalf("%s %+v %+v: not reproducible", name, v, r)
				}
			}
		}
	}
}

func TestLadderNested(t *testing.T) {
	for _, v := range []Video{{Frames: 1000, FPS: 30}, {Frames: 1800, FPS: 30}, {Frames: 257, FPS: 25}, {Frames: 108000, FPS: 30}} {
		for _, budgets := range [][]int{{16, 32, 64, 128, 256}, {8, 12, 20, 50}, {256, 16, 64}, {1, 3, 7}} {
			plans, err := Ladder(v, budgets)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range plans {
				if len(p.Indices) != budgets[i] || !slices.IsSorted(p.Indices) {
					t.Fatalf("plan %d: %v", i, p.Indices)
				}
				if len(slices.Compact(slices.Clone(p.Indices))) != budgets[i] {
					t.Fatalf("duplicates in %v", p.Indices)
				}
				for j, q := range plans {
					if budgets[j] > budgets[i] {
						for _, x := range p.Indices {
							if _, ok := slices.BinarySearch(q.Indices, x); !ok {
								t.Fatalf("N=%d budget %d frame %d not in budget %d", v.Frames, budgets[i], x, budgets[j])
							}
						}
					}
				}
			}
			u := Union(plans...)
			top := slices.Max(budgets)
			if u.Size != top {
				t.Fatalf("union of a nested ladder is %d frames, want %d", u.Size, top)
			}
		}
	}
	// Power-of-two budgets on a divisible video equal floor(i·N/n) directly.
	plans, _ := Ladder(Video{Frames: 1024, FPS: 30}, []int{16, 64})
	if !slices.Equal(plans[0].Indices, leftAligned(1024, 16)) {
		t.Fatal("ladder differs from floor(i·N/n) for divisible budgets")
	}
	if _, err := Ladder(Video{Frames: 10, FPS: 1}, []int{4, 16}); !errors.Is(err, ErrBudget) {
		t.Fatalf("err = %v", err)
	}
	if _, err := Ladder(Video{Frames: 10, FPS: 1}, nil); !errors.Is(err, ErrRequest) {
		t.Fatalf("err = %v", err)
	}
}

// DESIGN.md: the union of a {16,…,256} grid is 256 frames nested, far more with round(linspace).
func TestUnionNestedVersusLinspace(t *testing.T) {
	v := Video{Frames: 1800, FPS: 30}
	budgets := []int{16, 32, 64, 128, 256}
	nested, _ := Ladder(v, budgets)
	var lin []Selection
	for _, n := range budgets {
		lin = append(lin, mustPlan(t, "uniform", v, Request{Frames: n}))
	}
	un, ul := Union(nested...), Union(lin...)
	if un.Size != 256 || un.Requested != 496 || un.Shared != 128 {
		t.Fatalf("nested union %+v", un)
	}
	if ul.Size != 442 { // the figure docs/sampler.md quotes
		t.Fatalf("round(linspace) union is %d frames, docs/sampler.md says 442", ul.Size)
	}
	t.Logf("union: nested %d frames, round(linspace) %d frames", un.Size, ul.Size)
	u := Union(Selection{Indices: []int{5, 1, 1}}, Selection{Indices: []int{1, 9}})
	if !slices.Equal(u.Indices, []int{1, 5, 9}) || u.Shared != 1 || u.Requested != 5 {
		t.Fatalf("%+v", u)
	}
}
