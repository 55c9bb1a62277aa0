package load_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/loader/load"
	"github.com/framesweep/framesweep/rgb"
	"github.com/framesweep/framesweep/sampler"
)

// The oracles are the upstream readers themselves (../shared/oracles, unmodified), run by
// testdata/oracles/loaders.py: one Python process per loader for every video and budget.

func repoRoot() string { return filepath.Join("..", "..") }

func oraclesDir(t *testing.T) string {
	d := testenv.Shared(t, "oracles")
	testenv.NeedFile(t, filepath.Join(d, "lmms-eval", "load_video.py"))
	testenv.NeedFile(t, filepath.Join(d, "qwen-vl-utils", "vision_process.py"))
	return d
}

// oracleVideos: every testdata video and every shared video (MANIFEST.tsv), under -race too (CI runs
// this package with -race: 68 s of CPU for the package, docs/loaders.md). Two are left out unless
// FRAMESWEEP_ORACLE_ALL=1, because the upstream reader takes more than a CI test should: the
// 6-minute AV1 clip (21766 frames: lmms-eval decodes all of them for every budget, and
// torchvision's read_video converts every frame to RGB and holds it, 3.8 GB), and for qwen-vl-utils
// the 1080p edit-list clip (270 frames of 1920x1080 held by read_video: 4.9 GB peak for the
// oracle). Their code paths are those of the other MP4s; the report in docs/loaders.md gives the
// FRAMESWEEP_ORACLE_ALL=1 results.
func oracleVideos(t *testing.T, name string) []string {
	vids, _ := filepath.Glob(filepath.Join(repoRoot(), "testdata", "videos", "*"))
	shared := testenv.SharedVideos(t)
	b, err := os.ReadFile(filepath.Join(shared, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	all := os.Getenv("FRAMESWEEP_ORACLE_ALL") == "1"
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		p := strings.SplitN(line, "\t", 2)[0]
		heavy := p == "androidx-media/long_180p_av1.mp4" || (name == loader.QwenVLUtils && p == "androidx-media/edit_list_positive_shift.mp4")
		if heavy && !all {
			continue
		}
		vids = append(vids, filepath.Join(shared, p))
	}
	return vids
}

type oracleRec struct {
	Job          string   `json:"job"`
	Error        *string  `json:"error"`
	Shape        []int    `json:"shape"`
	Frames       []string `json:"frames"`
	ResizedShape []int    `json:"resized_shape"`
	Resized      []string `json:"resized"`
	SampleFPS    float64  `json:"sample_fps"`
	Indices      []int    `json:"indices"`
	Total        int      `json:"total"`
}

// runOracle starts the oracle on jobs and calls each with the records of one video as soon as the
// oracle has printed them (jobs are grouped by video), so Go's decoding overlaps the oracle's.
func runOracle(t *testing.T, which string, jobs []string, each func(path string, recs []oracleRec)) {
	py := testenv.NeedPython(t, "av", "numpy", "torch", "torchvision", "packaging", "requests", "PIL")
	args := append([]string{filepath.Join(repoRoot(), "testdata", "oracles", "loaders.py"), oraclesDir(t), which}, jobs...)
	cmd := exec.Command(py, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	var group []oracleRec
	n := 0
	flush := func() {
		if len(group) > 0 {
			p, _ := parseJob(t, group[0].Job)
			each(p, group)
			group = nil
		}
	}
	for sc.Scan() {
		var r oracleRec
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		n++
		if len(group) > 0 && strings.SplitN(group[0].Job, "|", 2)[0] != strings.SplitN(r.Job, "|", 2)[0] {
			flush()
		}
		group = append(group, r)
	}
	flush()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("oracle %s: %v\n%s", which, err, stderr.Bytes())
	}
	if n != len(jobs) {
		t.Fatalf("oracle %s answered %d of %d jobs\n%s", which, n, len(jobs), stderr.Bytes())
	}
}

// jobsFor gives every video budgets 8, 16 and 32 (for lmms-eval a path containing "webm" or "mkv"
// gets one: read_video ignores the budget there, before looking at it).
func jobsFor(videos []string, lmms bool, extra ...string) []string {
	var jobs []string
	for _, v := range videos {
		for _, n := range []int{8, 16, 32} {
			if lmms && n > 8 && (strings.Contains(v, "webm") || strings.Contains(v, "mkv")) {
				break
			}
			jobs = append(jobs, fmt.Sprintf("%s|%d|", v, n))
		}
	}
	return append(jobs, extra...)
}

func parseJob(t *testing.T, job string) (string, loader.Request) {
	p := strings.Split(job, "|")
	n, _ := strconv.Atoi(p[1])
	r := loader.Request{Frames: n}
	if p[2] != "" {
		f, err := strconv.ParseFloat(p[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		r.SampleFPS = f
	}
	return p[0], r
}

func hashes(imgs []*rgb.Image) []string {
	out := make([]string, len(imgs))
	for i, m := range imgs {
		h := sha256.Sum256(m.Packed())
		out[i] = hex.EncodeToString(h[:])
	}
	return out
}

// compare reports a mismatch between the oracle's frames and ours (count and per-frame digests).
func compare(what string, want []string, wantShape []int, got []*rgb.Image) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d frames, the oracle %d", what, len(got), len(want))
	}
	if len(got) > 0 && (wantShape[1] != got[0].H || wantShape[2] != got[0].W) {
		return fmt.Errorf("%s: %dx%d, the oracle %dx%d", what, got[0].W, got[0].H, wantShape[2], wantShape[1])
	}
	var bad []int
	for i, h := range hashes(got) {
		if h != want[i] {
			bad = append(bad, i)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: frames %v differ from the oracle's", what, bad)
	}
	return nil
}

// oracleCheck compares LoadMany (one call per video, so each video is decoded once for all its
// budgets, as a grid would) with the oracle's records of that video.
type oracleCheck struct {
	t               *testing.T
	name            string
	req             func(loader.Request) loader.Request
	ran, failedBoth int
}

func (c *oracleCheck) video(path string, recs []oracleRec) {
	t := c.t
	reqs := make([]loader.Request, len(recs))
	for k, rec := range recs {
		_, r := parseJob(t, rec.Job)
		reqs[k] = c.req(r)
	}
	results, errs, err := LoadMany(context.Background(), path, c.name, reqs, load.Options{})
	for k, rec := range recs {
		label := strings.TrimPrefix(rec.Job, repoRoot()+string(filepath.Separator))
		var res *load.Result
		e := err
		if e == nil {
			res, e = results[k], errs[k]
		}
		switch {
		case rec.Error != nil && e == nil:
			t.Errorf("%s: the oracle raises %q, Load returns %d frames", label, *rec.Error, len(res.Frames))
		case rec.Error != nil:
			c.failedBoth++
			t.Logf("%s: both fail (upstream: %.90s)", label, *rec.Error)
		case e != nil:
			t.Errorf("%s: the oracle returns %d frames, Load: %v", label, len(rec.Frames), e)
		case checkResult(t, label, rec, res):
			c.ran++
			extra := ""
			if res.ResizedW > 0 {
				extra = fmt.Sprintf(", resized %dx%d", res.ResizedW, res.ResizedH)
			}
			t.Logf("%s: equal, %d frames %dx%d%s (max abs diff 0)", label, len(res.Frames), res.Width, res.Height, extra)
		}
	}
}

func (c *oracleCheck) done() {
	c.t.Logf("%s: %d jobs byte-identical to the oracle (frames%s), %d where both fail", c.name, c.ran, map[bool]string{true: " and resized tensors", false: ""}[c.name == loader.QwenVLUtils], c.failedBoth)
	if c.ran == 0 {
		c.t.Fatal("no job ran")
	}
}

func checkResult(t *testing.T, label string, rec oracleRec, res *load.Result) bool {
	frames := make([]*rgb.Image, len(res.Frames))
	resized := make([]*rgb.Image, 0, len(res.Frames))
	for i, f := range res.Frames {
		frames[i] = f.Image
		if f.Resized != nil {
			resized = append(resized, f.Resized)
		}
	}
	if err := compare(label, rec.Frames, rec.Shape, frames); err != nil {
		t.Error(err)
		return false
	}
	if rec.Resized != nil {
		if err := compare(label+" resized", rec.Resized, rec.ResizedShape, resized); err != nil {
			t.Error(err)
			return false
		}
		if got := res.Positions(); fmt.Sprint(got) != fmt.Sprint(rec.Indices) || res.Count != rec.Total || res.SampleFPS != rec.SampleFPS {
			t.Errorf("%s: positions %v count %d sample_fps %v; oracle %v %d %v", label, got, res.Count, res.SampleFPS, rec.Indices, rec.Total, rec.SampleFPS)
			return false
		}
	}
	return true
}

// TestLmmsEvalMatchesOracle: Load(…, "lmms-eval") equals lmms-eval's read_video (PyAV backend) byte
// for byte, and fails where it raises, on every video × budgets 8/16/32 and a few fps requests.
func TestLmmsEvalMatchesOracle(t *testing.T) {
	vids := oracleVideos(t, loader.LmmsEval)
	nasa := filepath.Join(repoRoot(), "testdata", "videos", "nasa_13013.mp4")
	c := &oracleCheck{t: t, name: loader.LmmsEval, req: func(r loader.Request) loader.Request { return r }}
	runOracle(t, "lmms-eval", jobsFor(vids, true, nasa+"|32|1", nasa+"|32|0.05", nasa+"|4|2"), c.video)
	c.done()
}

// TestQwenVLUtilsMatchesOracle: Load(…, "qwen-vl-utils") equals fetch_video with the torchvision
// reader byte for byte, frames and resized tensors, on every video × nframes 8/16/32 and the fps mode.
func TestQwenVLUtilsMatchesOracle(t *testing.T) {
	vids := oracleVideos(t, loader.QwenVLUtils)
	nasa := filepath.Join(repoRoot(), "testdata", "videos", "nasa_13013.mp4")
	c := &oracleCheck{t: t, name: loader.QwenVLUtils, req: func(r loader.Request) loader.Request {
		r.Torch = sampler.Torch113AVX2 // the oracle's torch
		return r
	}}
	runOracle(t, "qwen-vl-utils", jobsFor(vids, false, nasa+"|0|", nasa+"|0|1"), c.video)
	c.done()
}

func TestLoadRefuses(t *testing.T) {
	nasa := filepath.Join(repoRoot(), "testdata", "videos", "nasa_13013.mp4")
	for _, c := range []struct {
		name string
		r    loader.Request
		want error
	}{
		{"nope", loader.Request{}, loader.ErrUnknown},
		{loader.Framesweep, loader.Request{Frames: 8}, loader.ErrRequest},
		{loader.QwenVLUtils, loader.Request{Frames: 8, SampleFPS: 1}, loader.ErrRequest},
		{loader.LmmsEval, loader.Request{Frames: -1}, loader.ErrRequest},
		{loader.LmmsEval, loader.Request{MaxPixels: 10}, loader.ErrRequest},
		{loader.QwenVLUtils, loader.Request{Frames: 400}, loader.ErrUpstream}, // nframes > 325 frames
	} {
		_, err := Load(context.Background(), nasa, c.name, c.r, load.Options{})
		if !errors.Is(err, c.want) {
			t.Errorf("%s %+v: %v, want %v", c.name, c.r, err, c.want)
		}
	}
	if _, err := Load(context.Background(), filepath.Join(t.TempDir(), "none.mp4"), loader.LmmsEval, loader.Request{}, load.Options{}); err == nil {
		t.Error("a missing file loads")
	}
}
