package runs

import (
	"errors"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/record"
)

// TestSameSweepDecoding: two sessions (or shards) of one sweep share their sampling settings; each
// flag that differs is named with both values. A run.json of an older framesweep (no decoding) is not
// refused, and its resume gets a warning saying what cannot be checked.
func TestSameSweepDecoding(t *testing.T) {
	info := func(d *record.Decoding) *Info { return &Info{Format: Format, Decoding: d} }
	base := &record.Decoding{Temperature: 0, Seed: 1, MaxTokens: 32}
	if err := SameSweep(info(base), info(&record.Decoding{Seed: 1, MaxTokens: 32})); err != nil {
		t.Fatalf("the same settings: %v", err)
	}
	err := SameSweep(info(base), info(&record.Decoding{Temperature: 0.7, Seed: 2, MaxTokens: 3}))
	if !errors.Is(err, ErrMismatch) {
		t.Fatalf("other settings: %v", err)
	}
	for _, want := range []string{"--temperature 0 vs 0.7", "--llm-seed 1 vs 2", "--max-tokens 32 vs 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not name %q", err, want)
		}
	}
	if err := SameSweep(info(nil), info(base)); err != nil {
		t.Errorf("an older run.json: %v", err)
	}
	if w := DecodingWarning(info(nil), info(base)); !strings.Contains(w, "records no sampling settings") || !strings.Contains(w, "--llm-seed 1") {
		t.Errorf("warning %q", w)
	}
	if w := DecodingWarning(info(base), info(base)); w != "" {
		t.Errorf("warning %q for a run.json that records them", w)
	}
}

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
