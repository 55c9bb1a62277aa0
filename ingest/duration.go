package ingest

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/record"
)

// DurationBins group durations given in seconds (lmms-eval's MLVU doc, VLMEvalKit's MLVU table, a
// table's duration column) into duration groups, so that the audit's per-duration metrics have groups
// of many items instead of one group per distinct length. Names[i] holds the durations ≤ Edges[i] (and
// above the edge before it); the last name holds those above the last edge.
type DurationBins struct {
	Edges []float64
	Names []string
}

// VideoMMEBins are Video-MME's groups: short (under 2 min), medium (4–15 min), long (30–60 min). Its
// ranges leave gaps; a duration in one goes to the next group up (2–4 min is medium, 15–30 min long).
var VideoMMEBins = DurationBins{Edges: []float64{120, 900}, Names: []string{"short", "medium", "long"}}

// ParseDurationBins reads --duration-bins: "videomme" (VideoMMEBins), "none" (keep durations as they
// are: nil), edges in seconds ("120,900": groups named "≤120s", "120–900s", ">900s"), or named edges
// with the last group's name ("short:120,medium:900,long").
func ParseDurationBins(s string) (*DurationBins, error) {
	switch s {
	case "videomme", "":
		b := VideoMMEBins
		return &b, nil
	case "none":
		return nil, nil
	}
	parts := strings.Split(s, ",")
	b := &DurationBins{}
	named := strings.Contains(s, ":")
	for i, p := range parts {
		name, edge, hasEdge := strings.Cut(strings.TrimSpace(p), ":")
		if !named {
			name, edge, hasEdge = "", name, true
		}
		last := i == len(parts)-1
		if named && last && !hasEdge {
			b.Names = append(b.Names, name)
			break
		}
		v, err := strconv.ParseFloat(edge, 64)
		if !hasEdge || err != nil || !(v > 0) || math.IsInf(v, 0) || (len(b.Edges) > 0 && v <= b.Edges[len(b.Edges)-1]) {
			return nil, fmt.Errorf("--duration-bins %q: want videomme, none, increasing edges in seconds (120,900), or NAME:EDGE,…,NAME (short:120,medium:900,long)", s)
		}
		b.Edges = append(b.Edges, v)
		b.Names = append(b.Names, name)
	}
	if !named {
		b.Names = make([]string, len(b.Edges)+1)
		for i, e := range b.Edges {
			if i == 0 {
				b.Names[0] = fmt.Sprintf("≤%gs", e)
			} else {
				b.Names[i] = fmt.Sprintf("%g–%gs", b.Edges[i-1], e)
			}
		}
		b.Names[len(b.Edges)] = fmt.Sprintf(">%gs", b.Edges[len(b.Edges)-1])
	}
	if len(b.Names) != len(b.Edges)+1 {
		return nil, fmt.Errorf("--duration-bins %q: name the group above the last edge too (…,medium:900,long)", s)
	}
	seen := map[string]bool{}
	for _, n := range b.Names {
		switch {
		case strings.TrimSpace(n) == "":
			return nil, fmt.Errorf("--duration-bins %q: a group with no name (NAME:EDGE,…,NAME)", s)
		case seen[n]:
			return nil, fmt.Errorf("--duration-bins %q: group %q twice: each group needs its own name", s, n)
		}
		seen[n] = true
	}
	return b, nil
}

// group is a duration's group: a number of seconds goes to its bin; anything else (a group name the
// harness already gives, "short") is kept. nil bins keep everything. A duration that is a number but
// not a finite one ≥ 0 ("-5", "NaN", "Inf") is an error, as items import and the record validator
// refuse it: it would become a group of its own.
func (b *DurationBins) group(v string) (string, error) {
	if err := record.CheckDuration("duration", v); err != nil {
		return "", err
	}
	if b == nil {
		return v, nil
	}
	sec, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return v, nil
	}
	for i, e := range b.Edges {
		if sec <= e {
			return b.Names[i], nil
		}
	}
	return b.Names[len(b.Edges)], nil
}
