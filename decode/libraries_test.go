package decode

import (
	"regexp"
	"testing"
)

// TestLibraries: the versions come from the linked FFmpeg (Debian 12's 5.1 ships libavcodec 59.x,
// libswscale 6.x); a build against another FFmpeg reports its own.
func TestLibraries(t *testing.T) {
	libs := Libraries()
	re := regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	for _, l := range []string{"libavcodec", "libavformat", "libavutil", "libswscale"} {
		if !re.MatchString(libs[l]) {
			t.Errorf("%s version %q is not x.y.z", l, libs[l])
		}
	}
	t.Logf("%v", libs)
}
