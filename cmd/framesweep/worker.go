package main

import (
	"io"

	"github.com/framesweep/framesweep/extract"
)

// runWorker is the child side of supervised decoding (internal/engine/worker): the job arrives as JSON on stdin
// and the answer leaves on stdout. Users do not run it by hand (help does not list it); the engine starts it.
func runWorker(args []string, stdout, stderr io.Writer) int {
	return extract.WorkerMain(args, stdout, stderr)
}
