package sampler

import (
	"fmt"
	"slices"
)

// Ladder returns nested selections for the given budgets (in the order given): the largest budget takes
// the left-aligned floor(i·N/n) frames, and each smaller budget takes floor(i·m/n) positions of the
// next larger selection (m its size), so every selection is a subset of every larger one for any set of
// budgets. When each budget divides the next (16, 32, 64 …) this equals floor(i·N/n) directly.
func Ladder(v Video, budgets []int) ([]Selection, error) {
	const op = "nested"
	if err := v.check(op); err != nil {
		return nil, err
	}
	if len(budgets) == 0 {
		return nil, errf(ErrRequest, op, "empty budget ladder")
	}
	sorted := slices.Clone(budgets)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	if sorted[0] < 1 {
		return nil, errf(ErrRequest, op, fmt.Sprintf("budget %d < 1", sorted[0]))
	}
	if top := sorted[len(sorted)-1]; top > v.Frames {
		return nil, errf(ErrBudget, op, fmt.Sprintf("%d frames requested from a video of %d frames", top, v.Frames))
	}
	byBudget := map[int][]int{}
	prev := leftAligned(v.Frames, sorted[len(sorted)-1])
	byBudget[len(prev)] = prev
	for k := len(sorted) - 2; k >= 0; k-- {
		n := sorted[k]
		pos := leftAligned(len(prev), n)
		cur := make([]int, n)
		for i, p := range pos {
			cur[i] = prev[p]
		}
		byBudget[n] = cur
		prev = cur
	}
	nested := registry["nested"]
	out := make([]Selection, len(budgets))
	for i, b := range budgets {
		out[i] = newSelection(nested, v, slices.Clone(byBudget[b]))
	}
	return out, nil
}

// NestedAmong is the nested policy's n frames when they must nest among other budgets (a grid's
// frames): the ladder's budgets this video can satisfy, and n, so a short video does not fail the
// small ones. op names the caller (a config id) in errors.
func NestedAmong(v Video, ladder []int, n int, op string) (Selection, error) {
	if err := v.check(op); err != nil {
		return Selection{}, err
	}
	if n > v.Frames {
		return Selection{}, errf(ErrBudget, op, fmt.Sprintf("%d frames requested from a video of %d frames", n, v.Frames))
	}
	var fit []int
	for _, b := range ladder {
		if b <= v.Frames {
			fit = append(fit, b)
		}
	}
	plans, err := Ladder(v, append(fit, n))
	if err != nil {
		return Selection{}, err
	}
	return plans[len(plans)-1], nil
}

// UnionReport is the set of frames a group of selections needs, and how much they share.
type UnionReport struct {
	Indices   []int `json:"indices"`   // sorted, distinct: the frames to decode
	Size      int   `json:"size"`      // len(Indices)
	Requested int   `json:"requested"` // sum of the selections' lengths (duplicates included)
	Shared    int   `json:"shared"`    // distinct frames used by two or more selections
}

// Union returns the sorted distinct frames of all selections and how many of them are shared.
func Union(sels ...Selection) UnionReport {
	users := map[int]int{}
	r := UnionReport{}
	for _, p := range sels {
		r.Requested += len(p.Indices)
		seen := map[int]bool{}
		for _, x := range p.Indices {
			if !seen[x] {
				seen[x] = true
				users[x]++
			}
		}
	}
	r.Indices = make([]int, 0, len(users))
	for x, c := range users {
		r.Indices = append(r.Indices, x)
		if c > 1 {
			r.Shared++
		}
	}
	slices.Sort(r.Indices)
	r.Size = len(r.Indices)
	return r
}
