package runs

import (
	"errors"
	"strings"
	"testing"
)

// TestSameSweepPortable: two sessions (a resume, or shards on other machines) are the same sweep when
// the model files have the same names and digests wherever they live, and whatever each machine's
// video root; another file name or digest is another sweep. A run.json that named the files by path
// (RUNs written before names) matches the same files named by name.
func TestSameSweepPortable(t *testing.T) {
	info := func(spec, root, digest string) *Info {
		return &Info{Format: Format, Runtime: Runtime{Spec: spec, Engine: "llamacpp", ModelSHA256: map[string]string{"model": digest, "mmproj": "bb"}},
			VideoRoot: root}
	}
	here := info("llamacpp:model=/home/a/m/q.gguf,mmproj=/home/a/m/p.gguf,threads=4", "/home/a/study", "aa")
	for _, same := range []*Info{
		info("llamacpp:model=q.gguf,mmproj=p.gguf,threads=4", "/scratch/job/study", "aa"),
		info("llamacpp:model=/mnt/models/q.gguf,mmproj=/mnt/models/p.gguf,threads=4", "", "aa"),
	} {
		if err := SameSweep(here, same); err != nil {
			t.Errorf("%+v: %v", same.Runtime, err)
		}
	}
	for _, other := range []*Info{
		info("llamacpp:model=/home/a/m/q8.gguf,mmproj=/home/a/m/p.gguf,threads=4", "/home/a/study", "aa"),
		info("llamacpp:model=q.gguf,mmproj=p.gguf,threads=4", "/home/a/study", "cc"),
		info("llamacpp:model=q.gguf,mmproj=p.gguf,threads=8", "/home/a/study", "aa"),
	} {
		if err := SameSweep(here, other); !errors.Is(err, ErrMismatch) || strings.Contains(err.Error(), "/home") {
			t.Errorf("%+v: %v (want a mismatch naming files by name)", other.Runtime, err)
		}
	}
}
