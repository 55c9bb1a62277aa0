package bench

import (
	"fmt"
	"math"
	"sort"
)

// Ladders: how a budget of n frames is placed over N frames.
const (
	// LadderLinspace is round(linspace(0, N-1, n)) with NumPy's round-half-to-even: what most Video LLM
	// stacks do. Budgets are not nested, so the union of {16..256} over 1800 frames is ~440 frames.
	LadderLinspace = "linspace"
	// LadderNested is the left-aligned floor(i·N/n): each power-of-two budget is a subset of the next, so
	// the union is the largest budget.
	LadderNested = "nested"
)

// DefaultBudgets is the grid of frame budgets.
var DefaultBudgets = []int{16, 32, 64, 128, 256}

// BudgetIndices returns the frame indices of a budget of n over N frames.
func BudgetIndices(ladder string, N, n int) ([]int, error) {
	if N <= 0 || n <= 0 || n > N {
		return nil, fmt.Errorf("bench: budget %d over %d frames", n, N)
	}
	out := make([]int, n)
	switch ladder {
	case LadderLinspace:
		if n == 1 {
			return []int{0}, nil
		}
		step := float64(N-1) / float64(n-1)
		for i := range out {
			out[i] = int(math.RoundToEven(float64(i) * step))
		}
	case LadderNested:
		for i := range out {
			out[i] = i * N / n
		}
	default:
		return nil, fmt.Errorf("bench: unknown ladder %q (want %s or %s)", ladder, LadderLinspace, LadderNested)
	}
	return out, nil
}

// Union returns each budget's indices and their sorted union.
func Union(ladder string, N int, budgets []int) (per [][]int, union []int, err error) {
	seen := map[int]bool{}
	for _, n := range budgets {
		idx, err := BudgetIndices(ladder, N, n)
		if err != nil {
			return nil, nil, err
		}
		per = append(per, idx)
		for _, i := range idx {
			if !seen[i] {
				seen[i] = true
				union = append(union, i)
			}
		}
	}
	sort.Ints(union)
	return per, union, nil
}
