package export

import (
	"github.com/framesweep/framesweep/internal/portable"
	"github.com/framesweep/framesweep/record"
)

// StripPaths takes this machine's directories out of what an export publishes (`audit --export`
// without --keep-paths): a record's video named by an absolute path (records written before videos
// were named relative to a root, or a video on another volume) keeps its file name, the runtime spec
// names its model files by file name (their digests are in model_sha256), and an error message's
// absolute paths are cut to their file names; a source given by absolute path is named by its last
// element. Relative names are kept: they name nothing outside what they are relative to.
func StripPaths(rows []record.Full, srcs []Source) {
	for i := range rows {
		r := &rows[i]
		r.Video = portable.Path(r.Video)
		r.Runtime = portable.Spec(r.Runtime, r.ModelSHA256)
		r.Error = portable.Text(r.Error)
	}
	for i := range srcs {
		srcs[i].Path = portable.Path(srcs[i].Path)
		if p := srcs[i].Run; p != nil {
			p.Runtime = portable.Spec(p.Runtime, p.ModelSHA256)
		}
	}
}
