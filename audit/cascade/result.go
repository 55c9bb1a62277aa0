package cascade

import (
	"fmt"
	"strings"
)

// DefaultSeed and DefaultPolicy are METRICS.md's defaults, which audit.DefaultOptions starts from:
// the seed of the folds' shuffle (and of the audit's bootstrap), and the sampling policy of the main
// grid, which breaks ties between budget chains. ChooseThreshold and CompareOnline run with them.
const (
	DefaultSeed   uint64 = 1
	DefaultPolicy        = "uniform"
)

// MaxFolds bounds Options.Folds (each fold holds its own aggregates).
const MaxFolds = 10000

// Options choose the budgets of a confidence cascade (METRICS.md "Confidence cascade").
type Options struct {
	// Budgets are frame counts; each must match exactly one visual multiple-choice config after the
	// Policy/size filters. Empty: pick the longest chain of one policy and resolution automatically.
	Budgets       []int
	Policy        string
	Width, Height int // 0: any size
	Reference     int // frames of the reference fixed budget; 0: the largest budget
	Folds         int // ≥ 2: choose τ on K−1 folds, score the held-out fold; at most MaxFolds
	MaxCurve      int // most curve points in the output (0: 2000); the sweep itself visits every τ
}

// Point is the cascade at one threshold τ (escalate while confidence < τ).
type Point struct {
	Tau              float64  `json:"tau"`
	Accuracy         float64  `json:"accuracy"`
	FramesCost       float64  `json:"frames_cost"`
	SharedFramesCost float64  `json:"shared_frames_cost"`
	LatencyS         *float64 `json:"latency_s"`
	EscalatedRate    float64  `json:"escalated_rate"` // % of items that went past the first budget
}

// Budget is one fixed budget evaluated on the cascade's items.
type Budget struct {
	Config           string   `json:"config"`
	Frames           int      `json:"frames"`
	Accuracy         float64  `json:"accuracy"`
	SharedFramesCost float64  `json:"shared_frames_cost"`
	LatencyS         *float64 `json:"latency_s"`
	// Unparsed counts the budget's answers over the cascade's items that named no option letter:
	// any makes the cascade's accuracy and saving partly the answer parser's.
	Unparsed int `json:"unparsed"`
}

// UnparsedBudgets lists the budgets holding unparsed answers, with their share of the cascade's
// items ("f16 25%"); nil when none does.
func (cr *Result) UnparsedBudgets() []string {
	var out []string
	for _, b := range cr.Budgets {
		if b.Unparsed > 0 && cr.Items > 0 {
			out = append(out, fmt.Sprintf("%s %.0f%%", b.Config, 100*float64(b.Unparsed)/float64(cr.Items)))
		}
	}
	return out
}

// Fold is one held-out fold.
type Fold struct {
	Fold            int      `json:"fold"`
	Items           int      `json:"items"`
	Tau             *float64 `json:"tau"` // chosen on the other folds; null if no τ reached the reference there
	TrainAccuracy   *float64 `json:"train_accuracy"`
	HeldoutAccuracy *float64 `json:"heldout_accuracy"`
	HeldoutShared   *float64 `json:"heldout_shared_frames_cost"`
}

// Result is the τ sweep, the chosen τ and, with folds, the cross-fitted estimate.
type Result struct {
	Budgets           []Budget `json:"budgets"`
	Items             int      `json:"items"`
	Dropped           int      `json:"dropped"`
	DroppedReason     string   `json:"dropped_reason,omitempty"`
	Reference         string   `json:"reference"`
	ReferenceAccuracy float64  `json:"reference_accuracy"`
	ReferenceShared   float64  `json:"reference_shared_frames_cost"`
	ReferenceLatencyS *float64 `json:"reference_latency_s"`
	SharedCostBasis   string   `json:"shared_cost_basis"` // "index sets", "nested assumption" or "mixed"
	ItemsWithIndices  int      `json:"items_with_indices"`
	TauCount          int      `json:"tau_count"`
	Curve             []Point  `json:"curve"`
	CurveThinned      bool     `json:"curve_thinned"`
	Selected          *Point   `json:"selected"`
	SharedCostSaving  *float64 `json:"shared_cost_saving"` // % below the reference's shared cost
	// SelectedLatency is the same selection done for wall-clock time (smallest mean latency with accuracy
	// ≥ the reference's), present when every record carries latency_s; LatencySaving is its % below
	// the reference's latency.
	SelectedLatency *Point   `json:"selected_latency"`
	LatencySaving   *float64 `json:"latency_saving"`
	Folds           int      `json:"folds"`
	FoldSeed        uint64   `json:"fold_seed"`
	FoldResults     []Fold   `json:"fold_results,omitempty"`
	// CrossFitted pools the held-out folds, each scored at the τ chosen on the other folds (its tau is 0:
	// the τ differs per fold, see FoldResults).
	CrossFitted *Point `json:"cross_fitted"`
}

// UnparsedWarning is the warning of a cascade whose budgets hold unparsed answers (parts:
// Result.UnparsedBudgets).
func UnparsedWarning(parts []string) string {
	return fmt.Sprintf("the confidence cascade is computed over unparsed answers (%s): its accuracy and saving are partly the answer parser's", strings.Join(parts, ", "))
}
