package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit/cascade"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// TestSweepCascadeCLI: a full sweep of a ladder, an online cascade whose threshold is chosen on it
// (--threshold-from), and `framesweep cascade ONLINE --offline FULL`: every item stops where the
// offline replay predicts, and the comparison with the fixed budgets is reported.
func TestSweepCascadeCLI(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short")
	}
	bin := testenv.Binary(t)
	spec := swModel(t)
	dir := t.TempDir()
	grid := filepath.Join(dir, "ladder.yaml")
	testenv.WriteFile(t, grid, []byte("frames: [2, 4, 8]\npolicies: [nested]\nresolutions: [\"64x48\"]\n"))
	base := func(run string) []string {
		return []string{"sweep", "--grid", grid, "--items", "../../examples/items.jsonl", "--runtime", spec, "--out", run, "--limit", "9", "--log-format", "json"}
	}
	full, online := filepath.Join(dir, "full"), filepath.Join(dir, "online")
	if out, err := exec.Command(bin, base(full)...).CombinedOutput(); err != nil {
		t.Fatalf("full sweep: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, append(base(online), "--cascade", "2,4,8", "--threshold-from", full)...).Output()
	if err != nil {
		t.Fatalf("online cascade: %v", err)
	}
	var sum struct {
		Cascade struct {
			Threshold float64 `json:"threshold"`
			From      string  `json:"threshold_from"`
			Final     int     `json:"items_final"`
		} `json:"cascade"`
	}
	if err := json.Unmarshal(out, &sum); err != nil || sum.Cascade.Final != 9 || !strings.Contains(sum.Cascade.From, full) {
		t.Fatalf("summary %s: %v", out, err)
	}
	page := filepath.Join(dir, "cascade.html")
	out, err = exec.Command(bin, "cascade", online, "--offline", full, "--json", "--html", page).Output()
	if err != nil {
		t.Fatalf("cascade --offline: %v\n%s", err, out)
	}
	var rep cascade.Comparison
	if err := json.Unmarshal(out, &rep); err != nil || rep.Agree == nil || *rep.Agree != 9 || len(rep.Disagree) != 0 || rep.FixedTop == nil || rep.FramesSaving == nil {
		t.Fatalf("comparison %s: %v", out, err)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "Against each fixed budget") || !strings.Contains(string(b), "f8-nested-64x48-raw") || strings.Contains(string(b), "src=\"http") || strings.Contains(string(b), "href=\"http") {
		t.Fatalf("cascade report: %v", err)
	}
}
