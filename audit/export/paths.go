package export

import (
	"fmt"

	"github.com/framesweep/framesweep/internal/portable"
	"github.com/framesweep/framesweep/record"
)

// StripPaths takes this machine's directories out of what an export publishes (`audit --export`
// without --keep-paths): a record's video named by an absolute path (records written before videos
// were named relative to a root, or a video on another volume) or by a relative path that climbs out
// of its root ("../../home/u/v.mp4": a video outside the sweep's video root) keeps its file name, the
// runtime spec names its model files by file name (their digests are in model_sha256), and an error
// message's absolute paths are cut to their file names; a source given by absolute path or file://
// URL is named by its last element. Relative names inside their root are kept: they name nothing
// outside what they are relative to. It returns a note for each kind of name it cut ("" when none).
func StripPaths(rows []record.Full, srcs []Source) []string {
	videos, sources := map[string]bool{}, 0
	for i := range rows {
		r := &rows[i]
		if v := portable.Path(r.Video); v != r.Video {
			videos[r.Video] = true
			r.Video = v
		}
		r.Runtime = portable.Spec(r.Runtime, r.ModelSHA256)
		r.Error = portable.Text(r.Error)
	}
	for i := range srcs {
		if p := portable.Path(srcs[i].Path); p != srcs[i].Path {
			srcs[i].Path = p
			sources++
		}
		if p := srcs[i].Run; p != nil {
			p.Runtime = portable.Spec(p.Runtime, p.ModelSHA256)
		}
	}
	var notes []string
	if len(videos) > 0 {
		notes = append(notes, fmt.Sprintf("%d video name(s) outside the video root (absolute, or relative and climbing out of it) are given by their file name (--keep-paths keeps them); two such videos of one name are told apart by video_sha256", len(videos)))
	}
	if sources > 0 {
		notes = append(notes, fmt.Sprintf("%d source(s) given by absolute path or file URL are named by their last element (--keep-paths keeps them)", sources))
	}
	return notes
}
