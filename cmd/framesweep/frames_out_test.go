package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// TestFramesOutConfined: `frames --out DIR` never writes through a link: a link in DIR named like an
// output is refused (--force replaces the link itself) and the file it names outside DIR is left as it
// was; a DIR holding another input's outputs is refused, and under --force they stay and the JSON
// lists them apart from what was written; the same command again into its own DIR needs no --force;
// a subdirectory that is a link out of DIR is never written into (extract's TestOutDirLinkedSubdir).
func TestFramesOutConfined(t *testing.T) {
	video := filepath.Join("..", "..", "testdata", "videos", "nasa_13013.mp4")
	tmp := t.TempDir()
	outside := filepath.Join(tmp, "outside.txt")
	testenv.WriteFile(t, outside, []byte("not a PNG\n"))
	dir := filepath.Join(tmp, "out")
	swMkdir(t, dir)
	if err := os.Symlink(outside, filepath.Join(dir, "000005.png")); err != nil {
		t.Fatal(err)
	}
	frames := func(d string, extra ...string) (int, extract.FramesResult, string) {
		rc, out, errs := runCLI(append([]string{"frames", video, "--indices", "5", "--out", d}, extra...)...)
		var res extract.FramesResult
		if rc == exitOK {
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%q: %v", out, err)
			}
		}
		return rc, res, errs
	}
	unchanged := func() {
		t.Helper()
		if b := testenv.ReadFile(t, outside); string(b) != "not a PNG\n" {
			t.Fatalf("the file outside --out was overwritten (%d bytes)", len(b))
		}
	}
	rc, _, errs := frames(dir)
	if rc != exitError || !strings.Contains(errs, "000005.png: a symbolic link") || !singleLine(errs) {
		t.Fatalf("a link named like an output: rc %d %q", rc, errs)
	}
	unchanged()
	rc, res, errs := frames(dir, "--force")
	if rc != exitOK || len(res.Written) != 1 || len(res.Others) != 0 {
		t.Fatalf("--force over a link: rc %d %+v %s", rc, res, errs)
	}
	unchanged()
	if st, err := os.Lstat(filepath.Join(dir, "000005.png")); err != nil || !st.Mode().IsRegular() || st.Size() < 100 {
		t.Fatalf("the link was not replaced by the PNG: %v %v", st, err)
	}
	// The same command again: its own outputs are replaced, no --force needed.
	if rc, res, errs = frames(dir); rc != exitOK || len(res.Written) != 1 {
		t.Fatalf("again into its own DIR: rc %d %s", rc, errs)
	}
	// Another input's outputs: refused; --force writes beside them and says which they are.
	testenv.WriteFile(t, filepath.Join(dir, "000007.png"), []byte("stale"))
	if rc, _, errs = frames(dir); rc != exitError || !strings.Contains(errs, "000007.png") || !strings.Contains(errs, "--force") {
		t.Fatalf("a DIR with another input's outputs: rc %d %q", rc, errs)
	}
	rc, res, errs = frames(dir, "--force")
	if rc != exitOK || len(res.Written) != 1 || len(res.Others) != 1 || res.Others[0] != filepath.Join(dir, "000007.png") {
		t.Fatalf("--force beside another input's outputs: rc %d %+v %s", rc, res, errs)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestFramesRecordBounded: `frames --record` holds a record to what a sweep writes before decoding a
// frame: a 2-frame config whose indices list 5,000 entries, and a record asking 100 frames at
// 8000x8000, are refused at once, in one line naming the record and the cause, with nothing written;
// --max-memory-mb lowers the limit (a record asking 2000x2000 frames is refused under 16 MiB), and the
// sweep's own record rebuilds under the default.
func TestFramesRecordBounded(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	if rc, _, errs := runCLI(append(swArgs(swModel(t), run), "--limit", "1")...); rc != exitOK {
		t.Fatalf("sweep: rc %d %s", rc, errs)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(testenv.ReadFile(t, filepath.Join(run, "records.jsonl")))), "\n")
	var target map[string]any
	at := -1
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m["geometry"] == "112x112" {
			target, at = m, i
			break
		}
	}
	if at < 0 {
		t.Fatal("no 112x112 record in the sweep")
	}
	item, config := target["item_id"].(string), target["config"].(string)
	variant := func(edit func(meta map[string]any, rec map[string]any)) string {
		var m map[string]any
		testenv.DecodeJSON(t, []byte(lines[at]), &m)
		edit(m["config_meta"].(map[string]any), m)
		b, _ := json.Marshal(m)
		out := append([]string(nil), lines...)
		out[at] = string(b) + "\n"
		dir := filepath.Join(t.TempDir(), "run")
		swMkdir(t, dir)
		testenv.WriteFile(t, filepath.Join(dir, "run.json"), testenv.ReadFile(t, filepath.Join(run, "run.json")))
		testenv.WriteFile(t, filepath.Join(dir, "records.jsonl"), []byte(strings.Join(out, "")))
		return dir
	}
	indices := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = i % 3 // video_90.mov, the shortest video, has 3 frames
		}
		return out
	}
	many := variant(func(meta, _ map[string]any) { meta["indices"] = indices(5000) })
	huge := variant(func(meta, rec map[string]any) {
		meta["indices"], meta["frames"] = indices(100), 100
		rec["geometry"] = "8000x8000"
	})
	mid := variant(func(_, rec map[string]any) { rec["geometry"] = "2000x2000" }) // 2 or 3 frames: 24 MiB or more
	for _, c := range []struct {
		name, run, want string
		extra           []string
	}{
		{"5,000 indices for 2 frames", many, "lists 5000 indices for", nil},
		{"100 frames at 8000x8000", huge, "over the limit of 2048 MiB (--max-memory-mb)", nil},
		{"--max-memory-mb 16", mid, "over the limit of 16 MiB", []string{"--max-memory-mb", "16"}},
	} {
		out := filepath.Join(t.TempDir(), "out")
		start := time.Now()
		rc, _, errs := runCLI(append([]string{"frames", "--record", c.run, item, config, "--out", out}, c.extra...)...)
		if rc != exitError || !strings.Contains(errs, c.want) || !singleLine(errs) || !strings.Contains(errs, "records.jsonl") {
			t.Errorf("%s: rc %d %q", c.name, rc, errs)
		}
		if ents, _ := os.ReadDir(out); len(ents) > 0 {
			t.Errorf("%s: %d files written", c.name, len(ents))
		}
		if s := time.Since(start); s > 10*time.Second {
			t.Errorf("%s: refused after %v", c.name, s)
		}
	}
	if rc, out, errs := runCLI("frames", "--record", run, item, config, "--out", t.TempDir()); rc != exitOK || !strings.Contains(out, `"match": true`) {
		t.Errorf("the real record: rc %d %s", rc, errs)
	}
}
