package sampler

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseLadder reads a ladder of frame budgets as every flag that takes one spells it ("16,32,64,128":
// the sweep's and the audit's --cascade, bench grid's --budgets): comma-separated integers in
// 1..MaxBudget, strictly increasing. An empty field, a space inside a number or a repeated budget is
// an error, the same in every command.
func ParseLadder(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		switch {
		case err != nil || strings.TrimSpace(f) == "":
			return nil, fmt.Errorf("%q: %q is not a frame budget (want increasing budgets such as 16,32,64,128)", s, f)
		case n < 1 || n > MaxBudget:
			return nil, fmt.Errorf("%q: budget %d out of range (want 1..%d)", s, n, MaxBudget)
		case len(out) > 0 && n <= out[len(out)-1]:
			return nil, fmt.Errorf("%q: budgets must increase (%d after %d)", s, n, out[len(out)-1])
		}
		out = append(out, n)
	}
	return out, nil
}
