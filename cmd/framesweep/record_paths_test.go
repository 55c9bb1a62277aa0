package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// absPathRe finds an absolute path in text: a "/" starting a word, a name, and another "/" (a URL's
// "//host" does not start one; "a / b" is no path).
var absPathRe = regexp.MustCompile(`(^|[\s"'(=:\[,>|` + "`" + `])/[A-Za-z0-9._~+-]+/`)

// TestExportCarriesNoLocalPaths: a study made under a directory standing in for a researcher's home
// (the release imported with `items import`, a model there, the RUN there, everything named by
// absolute path) is audited into an export, an HTML and a Markdown report and a JSON audit. None of
// them holds the stand-in home, the build machine's home, temp directory, checkout or working
// directory, or any absolute path; the records name videos relative to the items file and the model
// by file name and digest. With --keep-paths the home is there (the search can fail).
func TestExportCarriesNoLocalPaths(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home", "researcher")
	study := filepath.Join(home, "study")
	videos := filepath.Join(study, "videos")
	swMkdir(t, videos)
	for _, v := range []string{"h265_video.mp4", "video_90.mov"} {
		testenv.WriteFile(t, filepath.Join(videos, v), testenv.ReadFile(t, filepath.Join(repoDir(t), "testdata", "videos", v)))
	}
	release := filepath.Join(study, "release.csv")
	testenv.WriteFile(t, release, []byte("item_id,video,question,A,B,answer\n"+
		"h1,h265_video.mp4,What is the background colour?,Blue,Red,A\n"+
		"v1,video_90.mov,Is it rotated?,Yes,No,A\n"+
		"m1,missing.mp4,Is this video here?,Yes,No,B\n"))
	itemsFile := filepath.Join(study, "items.jsonl")
	if rc, out, errs := runCLI("items", "import", "csv", release, "--video-dir", videos, "--out", itemsFile, "--keep-missing"); rc != exitOK {
		t.Fatalf("items import: rc %d %s %s", rc, out, errs)
	}
	if b := string(testenv.ReadFile(t, itemsFile)); strings.Contains(b, home) || !strings.Contains(b, `"video":"videos/h265_video.mp4"`) {
		t.Fatalf("the imported items file is not portable:\n%s", b)
	}
	rc, out, errs := runCLI("testmodel", "--out", filepath.Join(study, "model"))
	if rc != exitOK {
		t.Fatalf("testmodel: %s", errs)
	}
	var tm struct{ Spec string }
	if err := json.Unmarshal([]byte(out), &tm); err != nil || !strings.Contains(tm.Spec, home) {
		t.Fatalf("testmodel spec %q: %v", tm.Spec, err)
	}
	grid := filepath.Join(study, "grid.yaml")
	testenv.WriteFile(t, grid, []byte("frames: [2]\npolicies: [uniform]\nresolutions: [\"32x24\"]\ntext_only: true\n"))
	run := filepath.Join(study, "run")
	// The missing video's pairs are error records (exit 1): their messages name the video too.
	if rc, _, errs := runCLI("sweep", "--grid", grid, "--items", itemsFile, "--runtime", tm.Spec+",threads=1", "--out", run, "--log-format", "json"); rc != exitError {
		t.Fatalf("sweep: rc %d %s", rc, errs)
	}
	if b := string(testenv.ReadFile(t, filepath.Join(run, "records.jsonl"))); strings.Contains(b, home) || !strings.Contains(b, `"video":"videos/missing.mp4"`) ||
		!strings.Contains(b, `"runtime":"llamacpp:model=tiny-llama.gguf,mmproj=tiny-mmproj.gguf,threads=1"`) {
		t.Fatalf("the records hold local paths:\n%s", b)
	}
	// A second input holds one more item whose video lies outside the video root ("../../…": a sweep
	// names such a video relative to the root, climbing out of it); the RUN is given as a file:// URL.
	elsewhere := filepath.Join(study, "elsewhere.jsonl")
	var extra strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(testenv.ReadFile(t, filepath.Join(run, "records.jsonl")))), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m["item_id"] != "h1" {
			continue
		}
		m["item_id"], m["video"] = "x1", "../../home/alice/private/x1.mp4"
		b, _ := json.Marshal(m)
		extra.Write(append(b, '\n'))
	}
	testenv.WriteFile(t, elsewhere, []byte(extra.String()))
	publish := func(keep bool) map[string][]byte {
		dir := filepath.Join(study, fmt.Sprintf("release-%v", keep))
		args := []string{"audit", "file://" + run, elsewhere, "--export", filepath.Join(dir, "export"), "--html", filepath.Join(dir, "report.html"),
			"--md", filepath.Join(dir, "report.md"), "--json"}
		if keep {
			args = append(args, "--keep-paths")
		}
		swMkdir(t, dir)
		rc, out, errs := runCLI(args...)
		if rc != exitOK {
			t.Fatalf("audit %v: rc %d %s", args, rc, errs)
		}
		files := map[string][]byte{"audit --json": []byte(out)}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files[p] = testenv.ReadFile(t, p)
			}
			return err
		})
		if err != nil || len(files) < 9 {
			t.Fatalf("%d files published: %v", len(files), err)
		}
		return files
	}
	forbidden := []string{home, repoDir(t), os.TempDir(), "/tmp/"}
	if h, err := os.UserHomeDir(); err == nil && h != "/" {
		forbidden = append(forbidden, h)
	}
	if wd, err := os.Getwd(); err == nil {
		forbidden = append(forbidden, wd)
	}
	forbidden = append(forbidden, "file://", "../", "alice")
	published := publish(false)
	if m := string(published[filepath.Join(study, "release-false", "export", "export.json")]); !strings.Contains(m, "outside the video root") || !strings.Contains(m, "file URL") {
		t.Errorf("export.json notes no cut name:\n%.2000s", m)
	}
	for name, b := range published {
		for _, f := range forbidden {
			if strings.Contains(string(b), f) {
				t.Errorf("%s holds %q", name, f)
			}
		}
		if !strings.HasSuffix(name, ".parquet") {
			if m := absPathRe.Find(b); m != nil {
				i := strings.Index(string(b), string(m))
				t.Errorf("%s holds an absolute path: …%s…", name, b[max(0, i-40):min(len(b), i+80)])
			}
		}
	}
	kept := 0
	for _, b := range publish(true) {
		if strings.Contains(string(b), home) {
			kept++
		}
	}
	if kept < 3 {
		t.Errorf("--keep-paths: only %d published files name the home directory (want the export's records, manifest and the HTML)", kept)
	}
}

// TestFramesRecordReproducesDemoSweep: the demo's sweep (examples/sweep-grid.yaml × examples/items.jsonl
// through the tiny model); `frames --record RUN ITEM CONFIG` rebuilds, for every visual config and
// every video, exactly the input the record says was fed (its input_sha256), writes its frames and
// tensor, and exits 0; a record whose input_sha256 differs makes it exit 1 with the JSON still
// printed; a text-only record has no input (exit 1, one line); the video of another root is refused
// by its digest.
func TestFramesRecordReproducesDemoSweep(t *testing.T) {
	t.Parallel()
	_, run := demoRun(t)
	type rec struct {
		ItemID      string `json:"item_id"`
		Config      string `json:"config"`
		Video       string `json:"video"`
		InputSHA256 string `json:"input_sha256"`
	}
	var recs []rec
	for _, line := range strings.Split(strings.TrimSpace(string(testenv.ReadFile(t, filepath.Join(run, "records.jsonl")))), "\n") {
		var r rec
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	done, configs := map[string]bool{}, map[string]bool{}
	for _, r := range recs {
		if r.Config == "text-only" || done[r.Video+" "+r.Config] {
			continue
		}
		done[r.Video+" "+r.Config] = true
		configs[r.Config] = true
		dir := t.TempDir()
		rc, out, errs := runCLI("frames", "--record", run, r.ItemID, r.Config, "--out", dir)
		var got recordFramesResult
		if err := json.Unmarshal([]byte(out), &got); rc != exitOK || err != nil {
			t.Fatalf("%s %s: rc %d %v %s", r.ItemID, r.Config, rc, err, errs)
		}
		if !got.Match || got.InputSHA256 != r.InputSHA256 || len(got.Written) != len(got.Indices)*got.Images || got.RecordVideo != r.Video {
			t.Fatalf("%s %s: %+v (record %s)", r.ItemID, r.Config, got, r.InputSHA256)
		}
		if st, err := os.Stat(got.Tensor); err != nil || st.Size() < int64(len(got.Indices)*got.Width*got.Height*3) {
			t.Fatalf("%s: %v", got.Tensor, err)
		}
	}
	if len(configs) != 8 || len(done) != 32 {
		t.Fatalf("rebuilt %d (video, config) pairs over %d configs, want 32 over 8", len(done), len(configs))
	}
	var r rec // a visual record of a video other than nasa_13013.mp4
	for _, x := range recs {
		if x.Config != "text-only" && !strings.Contains(x.Video, "nasa") {
			r = x
			break
		}
	}
	// The tensor reads with NumPy as the frames fed (the same sha256).
	if py := "/usr/bin/python3"; fileExists(py) {
		dir := t.TempDir()
		if rc, _, errs := runCLI("frames", "--record", run, r.ItemID, r.Config, "--out", dir); rc != exitOK {
			t.Fatal(errs)
		}
		script := "import hashlib, sys, numpy as np; a = np.load(sys.argv[1]); print(a.dtype, hashlib.sha256(a.tobytes()).hexdigest())"
		if out, err := exec.Command(py, "-c", script, filepath.Join(dir, "input.npy")).Output(); err != nil || strings.TrimSpace(string(out)) != "uint8 "+r.InputSHA256 {
			t.Errorf("numpy reads %q (%v), want uint8 %s", out, err, r.InputSHA256)
		}
	}
	// A record whose input differs from what it names: exit 1, the JSON says so.
	tampered := filepath.Join(t.TempDir(), "run")
	swMkdir(t, tampered)
	testenv.WriteFile(t, filepath.Join(tampered, "run.json"), testenv.ReadFile(t, filepath.Join(run, "run.json")))
	lines := strings.SplitAfter(string(testenv.ReadFile(t, filepath.Join(run, "records.jsonl"))), "\n")
	for i, l := range lines {
		if strings.Contains(l, fmt.Sprintf(`"item_id":%q,"config":%q`, r.ItemID, r.Config)) {
			lines[i] = strings.Replace(l, r.InputSHA256, strings.Repeat("0", 64), 1)
		}
	}
	testenv.WriteFile(t, filepath.Join(tampered, "records.jsonl"), []byte(strings.Join(lines, "")))
	rc, out, errs := runCLI("frames", "--record", tampered, r.ItemID, r.Config, "--out", t.TempDir())
	if rc != exitError || !strings.Contains(out, `"match": false`) || !strings.Contains(errs, "differs from the record's") || !singleLine(errs) {
		t.Errorf("tampered record: rc %d %q %q", rc, out, errs)
	}
	for _, c := range []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"--record", run, recs[0].ItemID, "text-only", "--out", t.TempDir()}, exitError, "no input to rebuild"},
		{[]string{"--record", run, "nope", "text-only", "--out", t.TempDir()}, exitError, "no record of the pair"},
		{[]string{"--record", run, r.ItemID, r.Config, "--out", t.TempDir(), "--video-root", t.TempDir()}, exitError, "no such file"},
		{[]string{"--record", run, r.ItemID, "--out", t.TempDir()}, exitUsage, "ITEM CONFIG"},
		{[]string{"--record", run, r.ItemID, r.Config, "--out", t.TempDir(), "--size", "8x8"}, exitUsage, "--size does not apply"},
		{[]string{"--video-root", t.TempDir(), "v.mp4", "--out", t.TempDir()}, exitUsage, "needs --record"},
	} {
		rc, _, errs := runCLI(append([]string{"frames"}, c.args...)...)
		if rc != c.rc || !strings.Contains(errs, c.want) || !singleLine(errs) {
			t.Errorf("frames %v: rc %d %q (want %d, %q)", c.args, rc, errs, c.rc, c.want)
		}
	}
	// Another file under the same name is refused by its digest.
	other := t.TempDir()
	swMkdir(t, filepath.Join(other, "..", "testdata", "videos"))
	testenv.WriteFile(t, filepath.Join(other, filepath.FromSlash(r.Video)), testenv.ReadFile(t, filepath.Join(repoDir(t), "testdata", "videos", "nasa_13013.mp4")))
	if rc, _, errs := runCLI("frames", "--record", run, r.ItemID, r.Config, "--out", t.TempDir(), "--video-root", other); rc != exitError || !strings.Contains(errs, "not the record's video") {
		t.Errorf("another video: rc %d %q", rc, errs)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// singleLine: s is one line (a handled error's message).
func singleLine(s string) bool { return s != "" && strings.Count(strings.TrimSpace(s), "\n") == 0 }

// TestSweepResumesRunWithoutVideoRoot: a RUN begun before records named videos relative to a root
// (run.json without video_root, the runtime spec with the model files' paths, records naming videos
// as the items file resolved them) still resumes: the new records name videos as its old ones do and
// the model files by name, and `frames --record` rebuilds its records' inputs.
func TestSweepResumesRunWithoutVideoRoot(t *testing.T) {
	t.Parallel()
	spec, demo := demoRun(t)
	run := copyRun(t, demo)
	// Make it an old RUN: no video_root, paths in the spec, the items file's resolved video paths;
	// keep the first half of its records.
	var info map[string]any
	if err := json.Unmarshal(testenv.ReadFile(t, filepath.Join(run, "run.json")), &info); err != nil {
		t.Fatal(err)
	}
	delete(info, "video_root")
	info["runtime"].(map[string]any)["spec"] = spec
	b, _ := json.MarshalIndent(info, "", "  ")
	testenv.WriteFile(t, filepath.Join(run, "run.json"), b)
	lines := strings.SplitAfter(strings.TrimSpace(string(testenv.ReadFile(t, filepath.Join(run, "records.jsonl")))), "\n")
	lines = lines[:len(lines)/2]
	legacy := "../../testdata/videos/" // examples/items.jsonl's "../testdata/videos/…" as items.Read resolved it from here
	var kept strings.Builder
	for _, l := range lines {
		kept.WriteString(strings.Replace(strings.TrimSpace(l), `"video":"../testdata/videos/`, `"video":"`+legacy, 1) + "\n")
	}
	testenv.WriteFile(t, filepath.Join(run, "records.jsonl"), []byte(kept.String()))
	if rc, _, errs := runCLI(append(swArgs(spec, run), "--resume")...); rc != exitOK {
		t.Fatalf("resume of an old RUN: rc %d %s", rc, errs)
	}
	all := strings.Split(strings.TrimSpace(string(testenv.ReadFile(t, filepath.Join(run, "records.jsonl")))), "\n")
	if len(all) != 108 {
		t.Fatalf("%d records after the resume, want 108", len(all))
	}
	for _, l := range all[len(lines):] {
		var r struct{ Video, Runtime, Config string }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.Video, legacy) || strings.Contains(r.Runtime, "/") {
			t.Fatalf("a resumed record of an old RUN: video %q runtime %q", r.Video, r.Runtime)
		}
	}
	if strings.Contains(string(testenv.ReadFile(t, filepath.Join(run, "run.json"))), `"video_root"`) {
		t.Error("the resume gave an old RUN a video root its old records are not relative to")
	}
	var r struct {
		ItemID string `json:"item_id"`
		Config string `json:"config"`
	}
	for _, l := range all {
		if testenv.DecodeJSON(t, []byte(l), &r); r.Config != "text-only" {
			break
		}
	}
	if rc, out, errs := runCLI("frames", "--record", run, r.ItemID, r.Config, "--out", t.TempDir()); rc != exitOK || !strings.Contains(out, `"match": true`) {
		t.Errorf("frames --record of an old RUN's record: rc %d %s", rc, errs)
	}
}
