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

// TestFramesRecordsBatch: `frames --record RUN --records FILE` over the demo sweep's records.jsonl
// rebuilds every visual record's input in one process, each into its own subdirectory of --out and equal
// to its record's input_sha256, and skips the text-only ones; a batch holding a record that breaks
// frames --record's bounds (more indices than frames, over --max-memory-mb) fails that record before
// its video is decoded and writes nothing for it, while the others are rebuilt; --out is confined as
// frames' is; bad usage and a bad FILE are one line. Then the Python client's reproduce_records
// (integrations/python/tests/records_batch_test.py) gives them all back through one process.
func TestFramesRecordsBatch(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	if rc, _, errs := runCLI(swArgs(swModel(t), run)...); rc != exitOK {
		t.Fatalf("sweep: rc %d %s", rc, errs)
	}
	recordsFile := filepath.Join(run, "records.jsonl")
	lines := strings.SplitAfter(strings.TrimSpace(string(testenv.ReadFile(t, recordsFile))), "\n")
	type rec struct {
		ItemID      string `json:"item_id"`
		Config      string `json:"config"`
		InputSHA256 string `json:"input_sha256"`
	}
	recs := make([]rec, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	rc, stdout, errs := runCLI("frames", "--record", run, "--records", recordsFile, "--out", out)
	took := time.Since(start)
	var res batchResult
	if err := json.Unmarshal([]byte(stdout), &res); rc != exitOK || err != nil || len(res.Records) != len(recs) || res.Failed+res.Mismatched != 0 {
		t.Fatalf("rc %d %v %s", rc, err, errs)
	}
	for i, e := range res.Records {
		r := recs[i]
		switch {
		case r.Config == "text-only":
			if e.Status != "skipped" || !strings.Contains(e.Error, "no input to rebuild") {
				t.Errorf("%s/%s: %s %q", r.ItemID, r.Config, e.Status, e.Error)
			}
		case e.Status != "match" || e.InputSHA256 != r.InputSHA256 || e.ItemID != r.ItemID || e.Line != i+1 ||
			e.Out != filepath.Join(out, extract.InputDir(i+1)):
			t.Errorf("%s/%s: %+v", r.ItemID, r.Config, e)
		case !fileExists(e.Tensor) || len(e.Written) != len(e.Indices)*e.Images:
			t.Errorf("%s/%s: tensor %s, %d PNGs", r.ItemID, r.Config, e.Tensor, len(e.Written))
		}
	}
	if res.Matched+res.Skipped != len(recs) || res.Skipped == 0 || res.Matched < 32 {
		t.Errorf("%d matched, %d skipped of %d", res.Matched, res.Skipped, len(recs))
	}
	t.Logf("%d records rebuilt in one process in %v", res.Matched, took.Round(time.Millisecond))

	// A record over the bounds fails alone, before its video is decoded, with nothing written for it.
	at, other := -1, -1 // a record of nasa_13013.mp4 (480x270: over 1 MiB to rebuild), one of another video
	for i, r := range recs {
		switch {
		case r.Config == "text-only":
		case strings.Contains(lines[i], "nasa_13013") && at < 0:
			at = i
		case !strings.Contains(lines[i], "nasa_13013") && other < 0:
			other = i
		}
	}
	var m map[string]any
	testenv.DecodeJSON(t, []byte(lines[at]), &m)
	m["config_meta"].(map[string]any)["indices"] = make([]int, 5000)
	b, _ := json.Marshal(m)
	bad := filepath.Join(t.TempDir(), "run")
	swMkdir(t, bad)
	testenv.WriteFile(t, filepath.Join(bad, "run.json"), testenv.ReadFile(t, filepath.Join(run, "run.json")))
	testenv.WriteFile(t, filepath.Join(bad, "records.jsonl"), []byte(strings.Replace(strings.Join(lines, ""), lines[at], string(b)+"\n", 1)))
	two := filepath.Join(t.TempDir(), "two.jsonl")
	testenv.WriteFile(t, two, []byte(lines[at]+lines[other]))
	for _, c := range []struct{ name, want string }{{"5,000 indices", "lists 5000 indices for"}, {"--max-memory-mb 1", "over the limit of 1 MiB"}} {
		o := filepath.Join(t.TempDir(), "out")
		args := []string{"frames", "--record", bad, "--records", two, "--out", o}
		if c.name == "--max-memory-mb 1" {
			args = []string{"frames", "--record", run, "--records", two, "--out", o, "--max-memory-mb", "1"}
		}
		rc, stdout, errs := runCLI(args...)
		var r batchResult
		testenv.DecodeJSON(t, []byte(stdout), &r)
		if rc != exitError || !strings.Contains(errs, c.want) || r.Failed < 1 || r.Records[0].Status != "failed" || fileExists(filepath.Join(o, extract.InputDir(1))) {
			t.Errorf("%s: rc %d %+v %q", c.name, rc, r, errs)
		}
		if c.name == "5,000 indices" && (r.Matched != 1 || !fileExists(filepath.Join(o, extract.InputDir(2), "input.npy")) || !singleLine(errs)) {
			t.Errorf("%s: the good record of the batch: %+v %q", c.name, r, errs)
		}
	}

	// --out: another entry is refused before anything is decoded; a link under an input's directory
	// name is never written through (replaced under --force).
	busy := t.TempDir()
	testenv.WriteFile(t, filepath.Join(busy, "notes.txt"), []byte("mine"))
	if rc, _, errs := runCLI("frames", "--record", run, "--records", two, "--out", busy); rc != exitError || !strings.Contains(errs, "notes.txt") || !singleLine(errs) || fileExists(filepath.Join(busy, extract.InputDir(1))) {
		t.Errorf("a busy --out: rc %d %q", rc, errs)
	}
	linked, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(linked, extract.InputDir(1))); err != nil {
		t.Fatal(err)
	}
	if rc, _, errs := runCLI("frames", "--record", run, "--records", two, "--out", linked); rc != exitError || !strings.Contains(errs, "symbolic link") {
		t.Errorf("a link under 000001: rc %d %q", rc, errs)
	}
	if rc, _, errs := runCLI("frames", "--record", run, "--records", two, "--out", linked, "--force"); rc != exitOK {
		t.Errorf("--force over a link: rc %d %q", rc, errs)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 || !fileExists(filepath.Join(linked, extract.InputDir(1), "input.npy")) {
		t.Errorf("written through the link: %d entries outside", len(ents))
	}

	badFile := filepath.Join(t.TempDir(), "bad.jsonl")
	testenv.WriteFile(t, badFile, []byte(lines[0]+"{\"item_id\": 3}\n"))
	for _, c := range []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"--record", run, "--records", badFile, "--out", t.TempDir()}, exitError, "bad.jsonl:2: want a JSON object with item_id and config"},
		{[]string{"--record", run, "--records", filepath.Join(t.TempDir(), "none"), "--out", t.TempDir()}, exitError, "no such file"},
		{[]string{"--records", two, "--out", t.TempDir()}, exitUsage, "--records needs --record RUN"},
		{[]string{"--record", run, "--records", two, "i", "c", "--out", t.TempDir()}, exitUsage, "no ITEM CONFIG"},
		{[]string{"--record", run, "--records", "", "--out", t.TempDir()}, exitUsage, "--records: want a FILE"},
	} {
		rc, _, errs := runCLI(append([]string{"frames"}, c.args...)...)
		if rc != c.rc || !strings.Contains(errs, c.want) || !singleLine(errs) {
			t.Errorf("frames %v: rc %d %q (want %d, %q)", c.args, rc, errs, c.rc, c.want)
		}
	}

	// The Python client: every record through one process.
	py := needPython(t, "numpy")
	pydir := filepath.Join(repoDir(t), "integrations", "python")
	env := []string{"PYTHONPATH=" + pydir, "FRAMESWEEP_RUN=" + run, "FRAMESWEEP_BIN=" + testenv.Binary(t), "PYTHONDONTWRITEBYTECODE=1"}
	var got struct{ Records, Matched, Skipped, Calls, Mismatch int }
	pyOut := runPython(t, py, env, filepath.Join(pydir, "tests", "records_batch_test.py"))
	if err := json.Unmarshal(pyOut, &got); err != nil || got.Records != len(recs) || got.Matched != res.Matched || got.Skipped != res.Skipped || got.Calls != 1 || got.Mismatch != 1 {
		t.Fatalf("records_batch_test: %v %s", err, pyOut)
	}
}

// batchResult reads recordsResult back (an embedded pointer to an unexported type does not decode).
type batchResult struct {
	Matched, Mismatched, Failed, Skipped int
	Records                              []struct {
		Status, Error string
		Line          int
		recordFramesResult
	}
}
