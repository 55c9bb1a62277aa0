package decode

import (
	"encoding/json"
	"testing"
)

// TestOrientationJSONRoundTrip: an Orientation read back from its JSON (a worker's Info) says what the
// original says, filter chain included; a chain the decoder never makes is refused.
func TestOrientationJSONRoundTrip(t *testing.T) {
	const one = 1 << 16
	mats := [][9]int32{
		{one, 0, 0, 0, one, 0, 0, 0, 1 << 30},              // identity
		{0, one, 0, -one, 0, 0, 0, 0, 1 << 30},             // 90°
		{0, -one, 0, one, 0, 0, 0, 0, 1 << 30},             // 270°
		{-one, 0, 0, 0, -one, 0, 0, 0, 1 << 30},            // 180°
		{one, 0, 0, 0, -one, 0, 0, 0, 1 << 30},             // vflip
		{46341, 46341, 0, -46341, 46341, 0, 0, 0, 1 << 30}, // 45°: the rotate filter
	}
	filters := map[string]bool{}
	for _, m := range mats {
		o := orientationFromMatrix(&m)
		o.Applied = !o.IsIdentity()
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var back Orientation
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if back != o || back.Filter() != o.Filter() || back.IsIdentity() != o.IsIdentity() {
			t.Errorf("%s read back as %+v (filter %q), want %+v", b, back, back.Filter(), o)
		}
		filters[o.Filter()] = true
	}
	if len(filters) != len(mats) {
		t.Errorf("the matrices gave %d distinct filters, want %d: %v", len(filters), len(mats), filters)
	}
	var o Orientation
	if err := json.Unmarshal([]byte(`{"rotation_deg":90,"filter":"scale=1:1,movie=x"}`), &o); err == nil {
		t.Error("an unknown filter chain was accepted")
	}
}
