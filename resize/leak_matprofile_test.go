//go:build matprofile

package resize

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"gocv.io/x/gocv"
)

// With `-tags matprofile`, gocv counts live Mats; the run fails if any test leaked one (STYLE.md B 6).
func TestMain(m *testing.M) {
	code := m.Run()
	if n := gocv.MatProfile.Count(); n != 0 {
		var b strings.Builder
		_ = gocv.MatProfile.WriteTo(&b, 1)
		fmt.Fprintf(os.Stderr, "resize: %d gocv Mats not closed:\n%s", n, b.String())
		code = 1
	}
	os.Exit(code)
}
