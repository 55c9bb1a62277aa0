package main

import (
	"fmt"
	"io"

	"github.com/framesweep/framesweep/llm/testmodel"
)

// runTestModel: framesweep testmodel --out DIR [--seed N]
func runTestModel(args []string, stdout, stderr io.Writer) int {
	const name = "testmodel"
	fs := newFlags(name, stderr)
	out := fs.String("out", "", "output directory (required)")
	seed := fs.Uint64("seed", testmodel.DefaultSeed, "random seed (the same seed writes byte-identical files)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep testmodel --out DIR [--seed N]\n\nWrites a tiny random-weight llama GGUF and a matching clip mmproj for tests and the demo; their answers are noise.")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) != 0 {
		return usageErr(stderr, name, "unexpected arguments %q", pos)
	}
	if *out == "" {
		return usageErr(stderr, name, "--out DIR is required")
	}
	p, err := testmodel.Write(*out, *seed)
	if err != nil {
		return failErr(stderr, name, err)
	}
	if err := writeJSON(stdout, struct {
		testmodel.Paths
		Spec string `json:"spec"`
		Note string `json:"note"`
	}{p, "llamacpp:model=" + p.Model + ",mmproj=" + p.Mmproj, "random weights: answers are noise"}); err != nil {
		return failErr(stderr, name, err)
	}
	return exitOK
}
