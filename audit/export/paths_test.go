package export

import (
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// TestStripPaths: records written before videos were named relative to a root (absolute video, a
// runtime spec with the model's path, an error naming the file), a video outside the root (../) and a
// file:// source are published with file names only, with notes saying so; relative names inside
// their root, other URLs and digests are kept.
func TestStripPaths(t *testing.T) {
	old := record.Full{Record: record.Record{ItemID: "a", Config: "f8", Status: record.StatusError,
		Error: "open /home/u/study/videos/a.mp4: no such file or directory"},
		Provenance: record.Provenance{Video: "/home/u/study/videos/a.mp4", Runtime: "llamacpp:model=/home/u/m/q.gguf,mmproj=/home/u/m/p.gguf,threads=2",
			ModelSHA256: map[string]string{"model": "aa", "mmproj": "bb"}}}
	now := record.Full{Record: record.Record{ItemID: "b", Config: "f8"},
		Provenance: record.Provenance{Video: "videos/b.mp4", Runtime: "openai:url=http://127.0.0.1:8080/v1,model=qwen"}}
	out := record.Full{Record: record.Record{ItemID: "c", Config: "f8", Status: record.StatusError, Error: "open ../../home/alice/c.mp4: no such file"},
		Provenance: record.Provenance{Video: "../../home/alice/c.mp4"}}
	rows := []record.Full{old, now, out}
	srcs := []Source{{Path: "/home/u/study/run", Run: &RunProof{Runtime: old.Runtime, ModelSHA256: old.ModelSHA256}}, {Path: "runs/b.jsonl"},
		{Path: "file:///home/u/study/run2"}}
	notes := StripPaths(rows, srcs)
	if r := rows[2]; r.Video != "c.mp4" || r.Error != "open c.mp4: no such file" || srcs[2].Path != "run2" {
		t.Errorf("../ video, file:// source: %q %q %q", r.Video, r.Error, srcs[2].Path)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "2 video name(s) outside the video root") || !strings.Contains(notes[1], "2 source(s)") {
		t.Errorf("notes %q", notes)
	}
	if r := rows[0]; r.Video != "a.mp4" || r.Runtime != "llamacpp:model=q.gguf,mmproj=p.gguf,threads=2" || r.Error != "open a.mp4: no such file or directory" {
		t.Errorf("old record: %q %q %q", r.Video, r.Runtime, r.Error)
	}
	if r := rows[1]; r.Video != "videos/b.mp4" || r.Runtime != now.Runtime {
		t.Errorf("a record of relative names changed: %q %q", r.Video, r.Runtime)
	}
	if srcs[0].Path != "run" || srcs[1].Path != "runs/b.jsonl" || strings.Contains(srcs[0].Run.Runtime, "/home") {
		t.Errorf("sources: %+v %+v", srcs, *srcs[0].Run)
	}
}
