package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/framesweep/framesweep/audit"
)

// TestInputsKeepModels: the records of the models named are kept, read with provenance or without;
// with provenance each source's rows are renumbered over what is kept.
func TestInputsKeepModels(t *testing.T) {
	paths := fixture(t)
	for _, full := range []bool{false, true} {
		in, err := ReadInputs(context.Background(), paths, full)
		if err != nil {
			t.Fatal(err)
		}
		if err := in.KeepModels([]string{"gamma", "alpha"}, "in"); err != nil {
			t.Fatal(err)
		}
		models := audit.Models(in.Records)
		if !reflect.DeepEqual(models, []string{"alpha", "gamma"}) || len(in.Records) != 30*4+30*3 {
			t.Errorf("full %v: models %v, %d records", full, models, len(in.Records))
		}
		if !full {
			continue
		}
		want := [][2]int{{0, 120}, {120, 120}, {120, 210}}
		for i, s := range in.Sources {
			if s.Rows != want[i] {
				t.Errorf("source %s rows %v, want %v", s.Path, s.Rows, want[i])
			}
		}
		if len(in.Full) != len(in.Records) || in.Full[130].Record.ItemID != in.Records[130].ItemID {
			t.Error("full rows and records disagree")
		}
	}
}

// TestRecordedOptions: the options an export records come back as the flags that give them, every
// recorded field among them; exports audited with different options are an *OptionsDifferError.
func TestRecordedOptions(t *testing.T) {
	a := AuditOptions{Seed: 7, Resamples: 10, Epsilon: 0.25, DefaultPolicy: "fps", Ceilings: map[string]int{"m": 16, "n": 8},
		Budgets: []int{8, 16}, Policy: "uniform", Width: 64, Height: 48, Reference: 16, Folds: 3, Cluster: "video-id", AllowDrop: true}
	want := map[string][]string{"bootstrap-seed": {"7"}, "resamples": {"10"}, "epsilon": {"0.25"}, "default-policy": {"fps"}, "cascade": {"8,16"},
		"cascade-policy": {"uniform"}, "cascade-size": {"64x48"}, "reference": {"16"}, "folds": {"3"}, "cluster": {"video-id"}, "allow-drop": {"true"}}
	got := a.Flags()
	ceil := got["ceiling"]
	delete(got, "ceiling")
	if !reflect.DeepEqual(got, want) || len(ceil) != 2 || (ceil[0] != "m=16" && ceil[1] != "m=16") {
		t.Errorf("flags %v ceiling %v", got, ceil)
	}
	// Every field has its flag: ceilings are --ceiling, width and height together --cascade-size.
	if n := reflect.TypeOf(a).NumField(); n != len(want)+2 {
		t.Errorf("AuditOptions has %d fields, %d more than the flags: a recorded option has no flag", n, n-len(want)-2)
	}
	dir := t.TempDir()
	var js []byte
	for i, o := range []AuditOptions{{Seed: 1, Resamples: 0, DefaultPolicy: "uniform"}, {Seed: 2, Resamples: 0, DefaultPolicy: "uniform"}} {
		in, err := ReadInputs(context.Background(), fixture(t), true)
		if err != nil {
			t.Fatal(err)
		}
		opt := o.Options()
		out, err := audit.AnalyzeAll(in.Records, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteAudit(filepath.Join(dir, string(rune('a'+i))), in, out, opt, append(js, "{}\n"...)); err != nil {
			t.Fatal(err)
		}
	}
	rec, from, err := Recorded([]string{filepath.Join(dir, "a")})
	if err != nil || rec == nil || rec.Seed != 1 || from != filepath.Join(dir, "a", ManifestName) {
		t.Fatalf("recorded %+v %s %v", rec, from, err)
	}
	var differ *OptionsDifferError
	if _, _, err := Recorded([]string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}); !errors.As(err, &differ) {
		t.Errorf("two exports, two seeds: %v", err)
	}
	if rec, _, err := Recorded([]string{os.DevNull}); rec != nil || err != nil {
		t.Errorf("a file positional: %+v %v", rec, err)
	}
}
