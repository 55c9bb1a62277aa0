package sampler

import (
	"fmt"
	"math"
	"slices"
)

// sampler is the one implementation of Sampler: a name, its modes and a planning function.
type sampler struct {
	name     string
	preset   bool
	frames   bool
	fps      bool
	needsFPS bool // the fps mode is the only mode (a frame budget only caps it)
	clip     bool // accepts a clip range (Request.StartS/EndS)
	summary  string
	upstream string // preset: the upstream file the formula was read from
	selectFn func(s *sampler, v Video, r Request) (Selection, error)
}

func (s *sampler) Name() string              { return s.name }
func (s *sampler) IsPreset() bool            { return s.preset }
func (s *sampler) Modes() (frames, fps bool) { return s.frames, s.fps }
func (s *sampler) NeedsFPS() bool            { return s.needsFPS }

// Summary is a one-line description; Upstream names the upstream source of a preset.
func (s *sampler) Summary() string  { return s.summary }
func (s *sampler) Upstream() string { return s.upstream }

func (s *sampler) Select(v Video, r Request) (Selection, error) {
	if err := v.check(s.name); err != nil {
		return Selection{}, err
	}
	if r.Frames < 0 || r.MinFrames < 0 || r.MaxFrames < 0 {
		return Selection{}, errf(ErrRequest, s.name, "frame counts must not be negative")
	}
	if r.Frames > MaxFrames || r.MinFrames > MaxFrames || r.MaxFrames > MaxFrames {
		return Selection{}, errf(ErrRequest, s.name, fmt.Sprintf("frame counts must be at most %d", MaxFrames))
	}
	if math.IsNaN(r.SampleFPS) || math.IsInf(r.SampleFPS, 0) || r.SampleFPS < 0 {
		return Selection{}, errf(ErrRequest, s.name, fmt.Sprintf("sample fps %v is not a non-negative number", r.SampleFPS))
	}
	switch r.Torch {
	case "", Torch2, Torch2NoFMA, Torch113AVX2, Torch113AVX512:
	default:
		return Selection{}, errf(ErrRequest, s.name, fmt.Sprintf("unknown torch variant %q (want 2, 2-nofma, 1.13-avx2 or 1.13-avx512)", r.Torch))
	}
	if math.IsNaN(r.StartS) || math.IsInf(r.StartS, 0) || math.IsNaN(r.EndS) || math.IsInf(r.EndS, 0) || r.StartS < 0 || r.EndS < 0 {
		return Selection{}, errf(ErrRequest, s.name, "clip start/end must be non-negative numbers")
	}
	if (r.StartS != 0 || r.EndS != 0) && !s.clip {
		return Selection{}, errf(ErrRequest, s.name, "takes no clip range (start/end seconds)")
	}
	if !s.frames && r.Frames > 0 {
		return Selection{}, errf(ErrRequest, s.name, "takes no frame budget")
	}
	if !s.fps && r.SampleFPS > 0 {
		return Selection{}, errf(ErrRequest, s.name, "has no fps mode (sample fps given)")
	}
	return s.selectFn(s, v, r)
}

// needFrames checks the budget of a strict generic policy: 1 ≤ n ≤ N.
func needFrames(s *sampler, v Video, r Request) (int, error) {
	if r.Frames < 1 {
		return 0, errf(ErrRequest, s.name, "needs a frame budget (frames ≥ 1)")
	}
	if r.Frames > v.Frames {
		return 0, errf(ErrBudget, s.name, fmt.Sprintf("%d frames requested from a video of %d frames", r.Frames, v.Frames))
	}
	return r.Frames, nil
}

// uniformPolicy builds a strict uniform policy from an index convention.
func uniformPolicy(name, summary string, idx func(N, n int, r Request) []int) *sampler {
	return &sampler{name: name, frames: true, summary: summary,
		selectFn: func(s *sampler, v Video, r Request) (Selection, error) {
			n, err := needFrames(s, v, r)
			if err != nil {
				return Selection{}, err
			}
			return newSelection(s, v, idx(v.Frames, n, r)), nil
		}}
}

func policyList() []*sampler {
	return []*sampler{
		uniformPolicy("uniform", "round(torch.linspace(0, N-1, n)) in float32 (qwen-vl-utils convention; --torch variant)",
			func(N, n int, r Request) []int { return roundLinspaceF32(N, n, r.Torch) }),
		uniformPolicy("uniform-round64", "round(np.linspace(0, N-1, n)) in float64, half to even (HF Qwen3-VL processor convention)",
			func(N, n int, _ Request) []int { return roundLinspaceF64(N, n) }),
		uniformPolicy("uniform-floor", "np.linspace(0, N-1, n, dtype=int): float64, truncated (lmms-eval / LLaVA convention)",
			func(N, n int, _ Request) []int { return floorLinspace(0, N-1, n) }),
		uniformPolicy("uniform-mid", "segment midpoints over [0, N-1] (InternVL get_index convention)",
			func(N, n int, _ Request) []int { return segmentMidpoints(N, n, 0) }),
		uniformPolicy("uniform-interior", "interior points int(i·N/(n+1)), i=1..n (VLMEvalKit nframe convention)",
			func(N, n int, _ Request) []int { return interiorPoints(N, n) }),
		uniformPolicy("uniform-left", "left-aligned floor(i·N/n), exact integers (nested for budgets that divide each other)",
			func(N, n int, _ Request) []int { return leftAligned(N, n) }),
		uniformPolicy("nested", "left-aligned floor(i·N/n); in a grid, the budgets form a ladder whose smaller plans are subsets of the larger",
			func(N, n int, _ Request) []int { return leftAligned(N, n) }),
		{name: "random", frames: true, summary: "n distinct frames uniformly at random (SplitMix64, seed), sorted", selectFn: planRandom},
		{name: "random-iid", frames: true, summary: "n i.i.d. uniform frames with replacement (SplitMix64, seed), sorted, duplicates kept", selectFn: planRandomIID},
		{name: "random-segment", frames: true, summary: "one uniform random frame in each of n equal segments [floor(i·N/n), floor((i+1)·N/n))", selectFn: planRandomSegment},
		{name: "dense-start", frames: true, fps: true, summary: "the first n consecutive frames, or n frames at --sample-fps from the start", selectFn: planDenseStart},
		{name: "fps", frames: true, fps: true, needsFPS: true, summary: "n = floor(duration·fps) clamped to [min, max] and N, spread left-aligned floor(i·N/n)", selectFn: planFPS},
	}
}

func planRandom(s *sampler, v Video, r Request) (Selection, error) {
	n, err := needFrames(s, v, r)
	if err != nil {
		return Selection{}, err
	}
	// Floyd's algorithm: n distinct values from [0, N) with n draws and O(n) memory.
	rng := splitMix64{state: r.Seed}
	N := v.Frames
	chosen := make(map[int]struct{}, n)
	idx := make([]int, 0, n)
	for j := N - n; j < N; j++ {
		t := int(rng.below(uint64(j + 1)))
		if _, ok := chosen[t]; ok {
			t = j
		}
		chosen[t] = struct{}{}
		idx = append(idx, t)
	}
	slices.Sort(idx)
	return newSelection(s, v, idx), nil
}

func planRandomIID(s *sampler, v Video, r Request) (Selection, error) {
	if r.Frames < 1 {
		return Selection{}, errf(ErrRequest, s.name, "needs a frame budget (frames ≥ 1)")
	}
	rng := splitMix64{state: r.Seed}
	idx := make([]int, r.Frames)
	for i := range idx {
		idx[i] = int(rng.below(uint64(v.Frames)))
	}
	slices.Sort(idx)
	return newSelection(s, v, idx), nil
}

func planRandomSegment(s *sampler, v Video, r Request) (Selection, error) {
	n, err := needFrames(s, v, r)
	if err != nil {
		return Selection{}, err
	}
	rng := splitMix64{state: r.Seed}
	N := int64(v.Frames)
	idx := make([]int, n)
	for i := range idx {
		lo := int64(i) * N / int64(n)
		hi := int64(i+1) * N / int64(n) // n ≤ N, so every segment holds at least one frame
		idx[i] = int(lo + int64(rng.below(uint64(hi-lo))))
	}
	return newSelection(s, v, idx), nil
}

func planDenseStart(s *sampler, v Video, r Request) (Selection, error) {
	if r.Frames < 1 {
		return Selection{}, errf(ErrRequest, s.name, "needs a frame budget (frames ≥ 1)")
	}
	n := r.Frames
	idx := make([]int, n)
	if r.SampleFPS == 0 {
		if n > v.Frames {
			return Selection{}, errf(ErrBudget, s.name, fmt.Sprintf("%d frames requested from a video of %d frames", n, v.Frames))
		}
		for i := range idx {
			idx[i] = i
		}
		return newSelection(s, v, idx), nil
	}
	if r.SampleFPS > v.FPS {
		return Selection{}, errf(ErrRequest, s.name, fmt.Sprintf("sample fps %g exceeds the video's %g fps (frames would repeat)", r.SampleFPS, v.FPS))
	}
	// Frame i is the one shown at t = i/f: floor(i·F/f).
	ratio := v.FPS / r.SampleFPS
	for i := range idx {
		idx[i] = int(math.Floor(float64(i) * ratio))
	}
	if last := idx[n-1]; last >= v.Frames {
		return Selection{}, errf(ErrBudget, s.name, fmt.Sprintf("%d frames at %g fps need frame %d, the video has %d", n, r.SampleFPS, last, v.Frames))
	}
	p := newSelection(s, v, idx)
	p.SampleFPS = r.SampleFPS
	return p, nil
}

func planFPS(s *sampler, v Video, r Request) (Selection, error) {
	if r.SampleFPS == 0 {
		return Selection{}, errf(ErrRequest, s.name, "needs a sample fps (> 0)")
	}
	minF, maxF := r.MinFrames, r.MaxFrames
	if minF == 0 {
		minF = 1
	}
	if r.Frames > 0 && (maxF == 0 || r.Frames < maxF) {
		maxF = r.Frames // a frame budget caps the count
	}
	if maxF > 0 && minF > maxF {
		return Selection{}, errf(ErrRequest, s.name, fmt.Sprintf("min frames %d > max frames %d", minF, maxF))
	}
	c := math.Floor(v.Duration() * r.SampleFPS)
	c = math.Max(c, float64(minF))
	if maxF > 0 {
		c = math.Min(c, float64(maxF))
	}
	c = math.Min(c, float64(v.Frames))
	n := int(c)
	p := newSelection(s, v, leftAligned(v.Frames, n))
	p.SampleFPS = float64(n) / v.Duration()
	return p, nil
}
