package sweep

import (
	"slices"
	"testing"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/record"
)

// The record validator's provenance value sets are the runtimes' (record does not import llm): a mode
// or fps source added to llm and not to record would make every sweep record of it refused at write.
func TestProvenanceValueSets(t *testing.T) {
	t.Parallel()
	if want := []string{llm.InputImages, llm.InputVideo}; !slices.Equal(record.InputModes, want) {
		t.Errorf("record.InputModes %v, llm's %v", record.InputModes, want)
	}
	if !slices.Equal(record.InputForms, llm.InputForms) {
		t.Errorf("record.InputForms %v, llm's %v", record.InputForms, llm.InputForms)
	}
	if want := []string{llm.FPSGiven, llm.FPSSampled, llm.FPSTimestamps}; !slices.Equal(record.FPSSources, want) {
		t.Errorf("record.FPSSources %v, llm's %v", record.FPSSources, want)
	}
	if !slices.Equal(record.VisualHows, llm.VisualHows) || !slices.Equal(record.VisualFamilies, llm.Families) ||
		record.VisualRuntime != llm.HowRuntime || record.VisualUnknown != llm.HowUnknown || record.VisualLow != llm.VisualLow || record.VisualHigh != llm.VisualHigh {
		t.Errorf("record's visual-token values %v %v differ from llm's %v %v", record.VisualHows, record.VisualFamilies, llm.VisualHows, llm.Families)
	}
}
