package sampler

import (
	"slices"
	"strings"
	"testing"
)

// TestParseLadder: one ladder rule for every flag that takes budgets; an empty field is an error (bench
// grid's parser used to skip it, so "16,,32" passed there and failed in the sweep).
func TestParseLadder(t *testing.T) {
	for in, want := range map[string][]int{"16,32,64,128": {16, 32, 64, 128}, "8": {8}, " 2, 4 ": {2, 4}} {
		if got, err := ParseLadder(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{"16,,32": "not a frame budget", "": "not a frame budget", "16,32,": "not a frame budget",
		"x": "not a frame budget", "0,4": "out of range", "4,200000": "out of range", "8,4": "must increase", "8,8": "must increase", "1 6": "not a frame budget"} {
		if got, err := ParseLadder(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v %v, want an error with %q", in, got, err, msg)
		}
	}
}
