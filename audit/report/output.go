package report

import (
	"io"

	"github.com/framesweep/framesweep/audit"
	"github.com/framesweep/framesweep/internal/portable"
)

// Format is one rendering of an audit.
type Format int

const (
	FormatHTML     Format = iota // the self-contained HTML file (HTML, ModelsHTML)
	FormatMarkdown               // Markdown (Markdown, ModelsMarkdown)
	FormatText                   // the short text summary (Text, ModelsText); Options are not used
)

// Write renders an audit's output, one model's audit or several models', in format f.
func Write(w io.Writer, out *audit.Output, f Format, opt Options) error {
	switch {
	case f == FormatText && out.Multi != nil:
		ModelsText(w, out.Multi)
	case f == FormatText:
		Text(w, out.Single)
	case f == FormatHTML && out.Multi != nil:
		return ModelsHTML(w, out.Multi, opt)
	case f == FormatHTML:
		return HTML(w, out.Single, opt)
	case out.Multi != nil:
		return ModelsMarkdown(w, out.Multi, opt)
	default:
		return Markdown(w, out.Single, opt)
	}
	return nil
}

// SourceNames are the inputs as a report's header names them: an absolute path by its last element
// unless keepPaths.
func SourceNames(pos []string, keepPaths bool) []string {
	if keepPaths {
		return pos
	}
	out := make([]string, len(pos))
	for i, p := range pos {
		out[i] = portable.Path(p)
	}
	return out
}
