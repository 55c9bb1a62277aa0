package version

import "testing"

func TestSOVersion(t *testing.T) {
	for in, want := range map[string][2]string{
		"libavcodec.so.59.37.100": {"libavcodec", "59.37.100"},
		"libopencv_core.so.4.6.0": {"libopencv_core", "4.6.0"},
		"libc.so.6":               {"libc", "6"},
		"libavcodec.so":           {"", ""},
		"ld-linux-x86-64.so.2":    {"", ""},
	} {
		m := soVersion.FindStringSubmatch(in)
		if (m == nil) != (want[0] == "") || (m != nil && (m[1] != want[0] || m[2] != want[1])) {
			t.Errorf("%s → %v, want %v", in, m, want)
		}
	}
	// A Go test binary maps at least libc (cgo is on in make test) or nothing at all (CGO_ENABLED=0):
	// either way Library never panics and names unknown libraries "unknown".
	if Library("libdoes-not-exist") != "unknown" {
		t.Error("unknown library reported")
	}
}
