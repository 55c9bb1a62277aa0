package sampler

import "math"

// fma32 is a float32 fused multiply-add a*b+c with one rounding. math.FMA rounds the exact result
// to float64 first; in this package's domain (integers below 2^24, a step of (end-start)/(n-1))
// the exact result spans at most ~34 significant bits, so the float64 step is exact and the only
// rounding is the float32 conversion.
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// mul32 is a float32 product rounded on its own; the explicit conversion keeps the Go compiler
// from fusing it with a following add on architectures that would (Go spec, "Arithmetic operators").
func mul32(a, b float32) float32 { return float32(a * b) }

// TorchLinspace emulates torch.linspace(start, end, steps) in float32 (torch's default dtype),
// following ATen's linspace_kernel (aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp):
// step = (end-start)/(steps-1) in float32; element i < steps/2 is start + step*i, the others
// end - step*(steps-1-i). Torch 1.13 vectorised the kernel: blocks of 2×L lanes take
// base + k*step from the block's first element, and a tail shorter than 2×L goes through the scalar
// formula (ATen cpu/Loops.h vectorized_loop).
func TorchLinspace(start, end float32, steps int, variant Torch) []float32 {
	if steps <= 0 {
		return nil
	}
	out := make([]float32, steps)
	if steps == 1 {
		out[0] = start
		return out
	}
	step := (end - start) / float32(steps-1)
	half := steps / 2
	fma := variant != Torch2NoFMA
	scalar := func(i int) float32 {
		if i < half {
			if fma {
				return fma32(step, float32(i), start)
			}
			return start + mul32(step, float32(i))
		}
		m := float32(steps - 1 - i)
		if fma {
			return fma32(-step, m, end)
		}
		return end - mul32(step, m)
	}
	lanes := 0
	switch variant {
	case Torch113AVX2:
		lanes = 8
	case Torch113AVX512:
		lanes = 16
	}
	i := 0
	if lanes > 0 {
		for ; i+2*lanes <= steps; i += 2 * lanes {
			for blk := i; blk < i+2*lanes; blk += lanes {
				// Vectorized<float>::arange(base, step): lane k = base + k*step, the product rounded
				// on its own (checked against Debian's torch 1.13.1 AVX2 build, torch_test.go).
				base := scalar(blk)
				out[blk] = base
				for k := 1; k < lanes; k++ {
					out[blk+k] = base + mul32(float32(k), step)
				}
			}
		}
	}
	for ; i < steps; i++ {
		out[i] = scalar(i)
	}
	return out
}

// NumpyLinspace emulates np.linspace(start, stop, num) in float64 (numpy 1.24 function_base.py):
// y_i = i*step + start with step = (stop-start)/(num-1), each operation rounded, and the last
// element set to stop exactly.
func NumpyLinspace(start, stop float64, num int) []float64 {
	if num <= 0 {
		return nil
	}
	out := make([]float64, num)
	if num == 1 {
		out[0] = start
		return out
	}
	div := float64(num - 1)
	delta := stop - start
	step := delta / div
	for i := range out {
		if step == 0 {
			out[i] = float64(float64(i)/div)*delta + start
		} else {
			out[i] = float64(float64(i)*step) + start
		}
	}
	out[num-1] = stop
	return out
}

// roundLinspaceF32 is torch.linspace(0, N-1, n).round().long(): .round() is half-to-even.
func roundLinspaceF32(N, n int, variant Torch) []int {
	ys := TorchLinspace(0, float32(N-1), n, variant)
	idx := make([]int, len(ys))
	for i, y := range ys {
		idx[i] = int(math.RoundToEven(float64(y)))
	}
	return idx
}

// roundLinspaceF64 is np.linspace(0, N-1, n).round().astype(int) (half-to-even).
func roundLinspaceF64(N, n int) []int {
	ys := NumpyLinspace(0, float64(N-1), n)
	idx := make([]int, len(ys))
	for i, y := range ys {
		idx[i] = int(math.RoundToEven(y))
	}
	return idx
}

// floorLinspace is np.linspace(lo, hi, n, dtype=int): float64 values truncated toward zero.
func floorLinspace(lo, hi, n int) []int {
	ys := NumpyLinspace(float64(lo), float64(hi), n)
	idx := make([]int, len(ys))
	for i, y := range ys {
		idx[i] = int(y)
	}
	return idx
}

// segmentMidpoints is InternVL's get_index without a bound (OpenGVLab/InternVL README.md):
// seg = (end_idx-start_idx)/S; idx_i = int(start_idx + seg/2 + np.round(seg*i)), evaluated left to
// right in float64, with end_idx = N-1.
func segmentMidpoints(N, S, firstIdx int) []int {
	return segmentMidpointsRange(firstIdx, N-1, S)
}

// segmentMidpointsRange is get_index over [startIdx, endIdx] (a bound, or the whole video).
func segmentMidpointsRange(startIdx, endIdx, S int) []int {
	seg := float64(endIdx-startIdx) / float64(S)
	idx := make([]int, S)
	for i := range idx {
		idx[i] = int(float64(startIdx) + seg/2 + math.RoundToEven(float64(seg*float64(i))))
	}
	return idx
}

// interiorPoints is VLMEvalKit's nframe rule (vlmeval/dataset/video_base.py save_video_frames):
// step = N/(n+1); idx_i = int(i*step) for i = 1..n. Frames 0 and N-1 are never chosen (for n < N).
func interiorPoints(N, n int) []int {
	step := float64(N) / float64(n+1)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = int(float64(i+1) * step)
	}
	return idx
}

// leftAligned is floor(i·N/n) in exact integer arithmetic: for budgets that divide one another the
// smaller plan is a subset of the larger one (nested designs).
func leftAligned(N, n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = int(int64(i) * int64(N) / int64(n))
	}
	return idx
}

// videoMMESlicer is the Video-MME reference extractor (look4u-ok/video-slicer slice_and_extract.py
// get_seq_frames): seg = (N-1)/n; idx_i = (round(seg*i) + round(seg*(i+1))) // 2.
func videoMMESlicer(N, n int) []int {
	seg := float64(N-1) / float64(n)
	idx := make([]int, n)
	for i := range idx {
		a := int(math.RoundToEven(float64(seg * float64(i))))
		b := int(math.RoundToEven(float64(seg * float64(i+1))))
		idx[i] = (a + b) / 2
	}
	return idx
}

// FloorLinspace is np.linspace(lo, hi, n, dtype=int): numpy's float64 linspace truncated toward zero
// (lmms-eval read_video, LLaVA, the harness loaders in loader/).
func FloorLinspace(lo, hi, n int) []int { return floorLinspace(lo, hi, n) }
