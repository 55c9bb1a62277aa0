package bench

import (
	"slices"
	"testing"
)

func TestUnionSizes(t *testing.T) {
	_, u, err := Union(LadderNested, 1800, DefaultBudgets)
	if err != nil || len(u) != 256 {
		t.Fatalf("nested union = %d frames, %v; want 256", len(u), err)
	}
	per, u, err := Union(LadderLinspace, 1800, DefaultBudgets)
	if err != nil {
		t.Fatal(err)
	}
	if len(u) != 442 { // numpy: len(set().union(*(np.round(np.linspace(0, 1799, n)) for n in budgets)))
		t.Fatalf("linspace union = %d frames", len(u))
	}
	for i, idx := range per {
		if idx[0] != 0 || idx[len(idx)-1] != 1799 || !slices.IsSorted(idx) {
			t.Errorf("budget %d: %v…%v", DefaultBudgets[i], idx[0], idx[len(idx)-1])
		}
	}
	// numpy: np.round(np.linspace(0, 1799, 16)) → 0, 120 (119.93…), 240, …
	if got, _ := BudgetIndices(LadderLinspace, 1800, 16); got[1] != 120 || got[15] != 1799 {
		t.Errorf("linspace 16/1800 = %v", got)
	}
	if _, err := BudgetIndices("nope", 10, 2); err == nil {
		t.Error("unknown ladder accepted")
	}
	if _, err := BudgetIndices(LadderLinspace, 10, 11); err == nil {
		t.Error("budget larger than the video accepted")
	}
}
