package main

import (
	"github.com/framesweep/framesweep/audit/export"
	"github.com/framesweep/framesweep/internal/portable"
)

// stripPaths takes this machine's absolute paths out of what the audit publishes (audit without
// --keep-paths): the export's rows and sources (export.StripPaths) and every error message the
// analysis quotes.
func (in *auditInputs) stripPaths() {
	if in.full != nil {
		export.StripPaths(in.full, in.sources)
	}
	for i := range in.recs {
		if r := &in.recs[i]; r.Error != "" {
			r.Error = portable.Text(r.Error)
		}
	}
}

// reportSources are the inputs as the reports' headers name them: an absolute path by its last
// element unless keep.
func reportSources(pos []string, keep bool) []string {
	if keep {
		return pos
	}
	out := make([]string, len(pos))
	for i, p := range pos {
		out[i] = portable.Path(p)
	}
	return out
}
