package export

import (
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// TestStripPaths: records written before videos were named relative to a root (absolute video, a
// runtime spec with the model's path, an error naming the file) are published with file names only;
// relative names, URLs and digests are kept.
func TestStripPaths(t *testing.T) {
	old := record.Full{Record: record.Record{ItemID: "a", Config: "f8", Status: record.StatusError,
		Error: "open /home/u/study/videos/a.mp4: no such file or directory"},
		Provenance: record.Provenance{Video: "/home/u/study/videos/a.mp4", Runtime: "llamacpp:model=/home/u/m/q.gguf,mmproj=/home/u/m/p.gguf,threads=2",
			ModelSHA256: map[string]string{"model": "aa", "mmproj": "bb"}}}
	now := record.Full{Record: record.Record{ItemID: "b", Config: "f8"},
		Provenance: record.Provenance{Video: "videos/b.mp4", Runtime: "openai:url=http://127.0.0.1:8080/v1,model=qwen"}}
	rows := []record.Full{old, now}
	srcs := []Source{{Path: "/home/u/study/run", Run: &RunProof{Runtime: old.Runtime, ModelSHA256: old.ModelSHA256}}, {Path: "runs/b.jsonl"}}
	StripPaths(rows, srcs)
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
