package main

import (
	"io"
	"os"

	"github.com/framesweep/framesweep/internal/engine/worker"
)

// runWorker is the child side of supervised decoding (internal/engine/worker): the job arrives as JSON on stdin
// and the answer leaves on stdout. Users do not run it by hand; the sweep runner and extract start it.
func runWorker(args []string, stdout, stderr io.Writer) int {
	return worker.Main(args, os.Stdin, stdout, stderr)
}
