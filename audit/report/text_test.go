package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/audit/cascade"
	"github.com/framesweep/framesweep/record/synth"
)

// TestTextSummaries: the text summary of an audit (through Write) names the paired items, every
// config's accuracy and the cascade; an offline cascade without a selection says so; an online run
// without a full sweep prints no replay.
func TestTextSummaries(t *testing.T) {
	opt := audit.DefaultOptions()
	opt.Resamples = 0
	res, err := audit.Analyze(synth.Records(100, 2), opt)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, &audit.Output{Single: res}, FormatText, Options{}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.HasPrefix(s, "paired items: 100 (dropped 0)\n") || !strings.Contains(s, "  f128-random ") || !strings.Contains(s, "\ncascade: τ=") {
		t.Errorf("summary:\n%s", s)
	}
	b.Reset()
	CascadeText(&b, &cascade.Result{Items: 3, Reference: "f32", Budgets: []cascade.Budget{{Config: "f8", Accuracy: 50}}})
	if want := "3 items, budgets: f8=50.0\nreference f32: 0.0 points at 0.0 shared frames\nno τ reaches the reference accuracy\n"; b.String() != want {
		t.Errorf("cascade text %q, want %q", b.String(), want)
	}
	b.Reset()
	OnlineText(&b, &cascade.Comparison{Online: &cascade.Online{Budgets: []int{8, 16}, Items: 2, StoppedAt: []cascade.Stop{{Budget: 8, Items: 2}}}}, "")
	if s := b.String(); !strings.Contains(s, "stopped at 8 frames: 2 items") || strings.Contains(s, "offline replay") {
		t.Errorf("online text %q", s)
	}
}
