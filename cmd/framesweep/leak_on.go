//go:build leakcheck

package main

import (
	"fmt"
	"io"

	"github.com/framesweep/framesweep/extract"
)

// leakExit is the exit status of a -tags leakcheck build: every FFmpeg object decode allocated must be
// freed by the time a command returns, or the process says so and exits 3 (the malformed-input replay
// runs such a binary, workers included).
func leakExit(code int, stderr io.Writer) int {
	if n := extract.LiveDecoderHandles(); n != 0 {
		fmt.Fprintf(stderr, "framesweep: leakcheck: %d FFmpeg handles of decode are live at exit\n", n)
		return 3
	}
	return code
}
