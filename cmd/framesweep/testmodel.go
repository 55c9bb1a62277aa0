package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/framesweep/framesweep/llm/testmodel"
)

// runTestModel: framesweep testmodel --out DIR [--arch A] [--weights-seed N]
func runTestModel(args []string, stdout, stderr io.Writer) int {
	const name = "testmodel"
	archs := make([]string, len(testmodel.Archs))
	for i, a := range testmodel.Archs {
		archs[i] = string(a)
	}
	fs := newFlags(name, stderr)
	out := fs.String("out", "", "output directory (required)")
	arch := fs.String("arch", string(testmodel.ArchLlama), "model family: "+strings.Join(archs, "|"))
	seed := fs.Uint64("weights-seed", testmodel.DefaultSeed, "seed of the random weights (the same seed writes byte-identical files)")
	deprecate(fs, "seed", "--weights-seed", "weights-seed")
	addJSON(fs, true)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: framesweep testmodel --out DIR [--arch %s] [--weights-seed N]\n\n", strings.Join(archs, "|"))
		fmt.Fprintln(stderr, "Writes a tiny random-weight text model GGUF and a matching clip mmproj of the family (llama: a llama\n"+
			"model and an mlp projector; qwen2vl, qwen25vl, qwen3vl, internvl: that family's text architecture and\n"+
			"projector) for tests and the demo; their answers are noise.")
		printFlags(fs)
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
	a, err := testmodel.ParseArch(*arch)
	if err != nil {
		return usageErr(stderr, name, "--arch %q: want one of %s", *arch, strings.Join(archs, ", "))
	}
	p, err := testmodel.WriteArch(*out, a, *seed)
	if err != nil {
		return failErr(stderr, name, err)
	}
	if err := writeJSON(stdout, struct {
		testmodel.Paths
		Arch string `json:"arch"`
		Spec string `json:"spec"`
		Note string `json:"note"`
	}{p, string(a), "llamacpp:model=" + p.Model + ",mmproj=" + p.Mmproj, "random weights: answers are noise"}); err != nil {
		return failErr(stderr, name, err)
	}
	return exitOK
}
