package native

import (
	"sort"
	"strings"
)

// norms are the normalisations harnesses use, by the names the CLI, grids and cache keys use.
var norms = map[string]Norm{
	"unit":     NormRescale,
	"half":     NormSigLIP,
	"imagenet": NormImageNet,
	"clip":     NormCLIP,
}

// NormNames lists the names LookupNorm knows, sorted.
func NormNames() []string {
	out := make([]string, 0, len(norms))
	for n := range norms {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LookupNorm returns the named normalisation: unit (x/255), half (SigLIP, mean = std = 0.5),
// imagenet (InternVL), clip (Qwen-VL, CLIP).
func LookupNorm(name string) (Norm, error) {
	n, ok := norms[name]
	if !ok {
		return Norm{}, errf("tensor", ErrBadArgument, "normalisation %q (known: %s)", name, strings.Join(NormNames(), ", "))
	}
	return n, nil
}
