package splitmix

import "testing"

// The first outputs for seed 1234567 from Vigna's reference splitmix64.c.
func TestReference(t *testing.T) {
	s := Source{State: 1234567}
	want := []uint64{6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431, 16408922859458223821}
	for i, w := range want {
		if got := s.Uint64(); got != w {
			t.Fatalf("output %d = %d, want %d", i, got, w)
		}
	}
}

// TestIntn: multiply-high of the reference outputs above, (v × 10) >> 64.
func TestIntn(t *testing.T) {
	s := Source{State: 1234567}
	for i, w := range []int{3, 1, 5} {
		if got := s.Intn(10); got != w {
			t.Fatalf("draw %d = %d, want %d", i, got, w)
		}
	}
}
