package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/loader/load"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/serve"
)

// repoDir is the repository root.
func repoDir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// lockedBuffer collects a child's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveProc is a running `framesweep serve` child process.
type serveProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
}

// startServe runs `bin serve --addr 127.0.0.1:0 args…`, waits for its ready line and stops it with
// SIGTERM when the test ends (it must exit 0: a graceful shutdown).
func startServe(t *testing.T, bin string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	p := &serveProc{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
		io.Copy(io.Discard, out)
	}()
	select {
	case s := <-line:
		var r serveReady
		if err := json.Unmarshal([]byte(s), &r); err != nil || !strings.HasPrefix(r.URL, "http://127.0.0.1:") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("ready line %q: %v; stderr: %s", s, err, p.stderr)
		}
		p.url = r.URL
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("serve did not start; stderr: %s", p.stderr)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited with %v; stderr: %s", err, p.stderr)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("serve did not stop on SIGTERM")
		}
	})
	return p
}

// procStatus reads a field (kB) of /proc/PID/status.
func procStatus(t testing.TB, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			n, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// extracted is what `framesweep extract` wrote for one configuration of one video.
type extracted struct {
	Key          string `json:"key"`
	FramesSHA256 string `json:"frames_sha256"`
	ObjectSHA256 string `json:"object_sha256"`
	Shape        []int  `json:"shape"`
	Indices      []int  `json:"indices"`
	Config       string `json:"config"`
}

// extractOne runs `framesweep extract` with the one-config grid that r names, for the video at path,
// and reads back its only object.
func extractOne(t *testing.T, path string, r serve.Request) extracted {
	t.Helper()
	var g strings.Builder
	if r.Frames > 0 {
		fmt.Fprintf(&g, "frames: [%d]\n", r.Frames)
	}
	if r.SampleFPS > 0 {
		fmt.Fprintf(&g, "sample_fps: [%g]\n", r.SampleFPS)
	}
	switch {
	case r.Loader != "":
		fmt.Fprintf(&g, "loader: %q\n", r.Loader)
	case r.Preset != "":
		fmt.Fprintf(&g, "presets: [%q]\n", r.Preset)
	default:
		fmt.Fprintf(&g, "policies: [%q]\n", r.Policy)
	}
	if r.Seed != 0 {
		fmt.Fprintf(&g, "seeds: [%d]\n", r.Seed)
	}
	if r.Resolution != "" {
		fmt.Fprintf(&g, "resolutions: [%q]\n", r.Resolution)
	}
	if r.Pipeline != "" {
		fmt.Fprintf(&g, "pipelines: [%s]\n", r.Pipeline)
	}
	args := []string{"--grid", exWriteGrid(t, g.String()), "--out", t.TempDir(), "--videos", path}
	if r.Kernel != "" {
		args = append(args, "--kernel", r.Kernel)
	}
	if r.DType != "" {
		args = append(args, "--dtype", r.DType)
	}
	if r.Norm != "" {
		args = append(args, "--norm", r.Norm)
	}
	code, sum, errs := exRun(t, args...)
	if code != 0 || sum.ObjectsWritten != 1 {
		t.Fatalf("extract %v: exit %d %+v %s", args, code, sum, errs)
	}
	obj := mustGlob(t, filepath.Join(args[3], "cas", "sha256", "*", "*"))
	b, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	f, err := cache.ParseSafetensors(b)
	if err != nil {
		t.Fatal(err)
	}
	fr := f.Tensors["frames"]
	fs, os := sha256.Sum256(fr.Data), sha256.Sum256(b)
	var idx []int
	testenv.DecodeJSON(t, []byte(f.Metadata["indices"]), &idx)
	return extracted{Key: f.Metadata["key"], FramesSHA256: hex.EncodeToString(fs[:]), ObjectSHA256: hex.EncodeToString(os[:]),
		Shape: fr.Shape, Indices: idx, Config: f.Metadata["config"]}
}

// TestServeBinary runs the built binary's `serve` and talks to it: Debian's python3 + numpy through
// the framesweep_client package (the frames equal extract's), the harness adapters through an
// installed copy of the package, the worker and cache flags, and records given back. In `make test`
// the binary is race-built (docs/testing.md): the race detector watches the server under these
// concurrent clients.
func TestServeBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin, videos := testenv.Binary(t), serveVideos(t)
	t.Run("python", func(t *testing.T) { servePython(t, bin, videos) })
	t.Run("worker+cache", func(t *testing.T) { serveWorkerCache(t, bin, videos) })
	t.Run("records", func(t *testing.T) { serveRecords(t, bin, videos) })
}

// TestServeLoad: the bounded load test of the built binary's `serve`, and its memory under large
// objects. It measures the process (requests per second, peak RSS), so `make test` runs it on the
// plain binary, in the integration step (docs/testing.md).
func TestServeLoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	serveLoad(t, testenv.Binary(t), serveVideos(t))
}

func serveVideos(t *testing.T) string {
	t.Helper()
	videos, err := filepath.EvalSymlinks(filepath.Join(repoDir(t), "testdata", "videos"))
	if err != nil {
		t.Fatal(err)
	}
	return videos
}

// serveRecords: a sweep of the demo grid whose records name videos relative to the served root
// (--video-root); the Python helpers give every (video, config)'s input back, through the CLI
// (reproduce_record: frames --record) and through the server (Client.record_frames), each equal to the
// record's input_sha256; reproduce_record skips a text-only record with a warning and raises
// FramesweepError for a missing binary, and record_frames names --video-root for a video outside the
// served root (integrations/python/tests/records_test.py).
func serveRecords(t *testing.T, bin, videos string) {
	py := needPython(t, "numpy")
	run := filepath.Join(t.TempDir(), "run")
	if rc, _, errs := runCLI(append(swArgs(swModel(t), run), "--video-root", videos)...); rc != exitOK {
		t.Fatalf("sweep: %s", errs)
	}
	p := startServe(t, bin, "--root", videos)
	pydir := filepath.Join(repoDir(t), "integrations", "python")
	env := []string{"PYTHONPATH=" + pydir, "FRAMESWEEP_URL=" + p.url, "FRAMESWEEP_RUN=" + run, "FRAMESWEEP_BIN=" + bin, "PYTHONDONTWRITEBYTECODE=1"}
	var got struct {
		CLI, Serve       int
		Refused, Skipped []string
	}
	out := runPython(t, py, env, filepath.Join(pydir, "tests", "records_test.py"))
	if err := json.Unmarshal(out, &got); err != nil || got.CLI != 32 || got.Serve != 32 || len(got.Refused) != 4 || len(got.Skipped) != 1 {
		t.Fatalf("records_test: %v %s", err, out)
	}
}

// serveWorkerCache: with --worker (decoding in supervised child processes) and --cache, the served
// object is extract's, and it lands in the cache where extract then finds it (and skips it).
func serveWorkerCache(t *testing.T, bin, videos string) {
	dir := t.TempDir()
	p := startServe(t, bin, "--root", videos, "--worker", "--cache", dir)
	r := serve.Request{Video: "nasa_13013.mp4", Preset: "lmms-eval", Frames: 8, Resolution: "64x48", Pipeline: "cached"}
	body, _ := json.Marshal(r)
	res, err := http.Post(p.url+"/v1/frames", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	want := extractOne(t, filepath.Join(videos, r.Video), r)
	if sum := sha256.Sum256(b); res.StatusCode != 200 || hex.EncodeToString(sum[:]) != want.ObjectSHA256 || res.Header.Get("X-Framesweep-Key") != want.Key {
		t.Fatalf("--worker: %d %s, not extract's object %+v", res.StatusCode, res.Header.Get("X-Framesweep-Key"), want)
	}
	grid := exWriteGrid(t, "frames: [8]\npresets: [lmms-eval]\nresolutions: [\"64x48\"]\npipelines: [cached]\n")
	code, sum, errs := exRun(t, "--grid", grid, "--out", dir, "--videos", filepath.Join(videos, r.Video))
	if code != 0 || sum.ObjectsSkipped != 1 || sum.ObjectsWritten != 0 {
		t.Fatalf("extract into the server's cache: exit %d %+v %s", code, sum, errs)
	}
}

func needPython(t *testing.T, modules ...string) string {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		testenv.Missing(t, "Debian's /usr/bin/python3: %v", err)
	}
	for _, m := range modules {
		if out, err := exec.Command(py, "-c", "import "+m).CombinedOutput(); err != nil {
			testenv.Missing(t, "python3 module %s: %v %s", m, err, out)
		}
	}
	return py
}

func runPython(t *testing.T, py string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(py, args...)
	cmd.Env = append(os.Environ(), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python %v: %v\n%s\n%s", args, err, out, errb.String())
	}
	return out
}

func servePython(t *testing.T, bin, videos string) {
	py := needPython(t, "numpy")
	pydir := filepath.Join(repoDir(t), "integrations", "python")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("test-token-"+strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, bin, "--root", videos, "--token-file", tokenFile)
	if res, err := http.Get(p.url + "/v1/health"); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %v %v", res, err)
	}

	cases := []serve.Request{
		{Video: "nasa_13013.mp4", Preset: "qwen2.5-vl", Frames: 8, Resolution: "qwen2.5-vl"},
		{Video: "nasa_13013.mp4", Preset: "vlmevalkit", Frames: 8, Resolution: "64x48", Pipeline: "cached"},
		{Video: "video_90.mov", Preset: "lmms-eval", Frames: 3, DType: "f16", Norm: "imagenet"},
		{Video: "bear-vp9-odd-dimensions.webm", Policy: "random", Frames: 5, Seed: 7, Resolution: "short:40+crop:32", Kernel: "cv-area"},
		{Video: "h265_video.mp4", Preset: "internvl3", Frames: 4, Resolution: "internvl3"},
	}
	type pyCase struct {
		Request serve.Request `json:"request"`
		extracted
	}
	var exp struct {
		Cases []pyCase       `json:"cases"`
		Bad   map[string]any `json:"bad"`
	}
	for _, c := range cases {
		exp.Cases = append(exp.Cases, pyCase{c, extractOne(t, filepath.Join(videos, c.Video), c)})
	}
	exp.Bad = map[string]any{
		"escape":           []any{"../videos/nasa_13013.mp4", map[string]any{"policy": "uniform", "frames": 2}, 403},
		"absolute outside": []any{"/etc/passwd", map[string]any{"policy": "uniform", "frames": 2}, 403},
		"url":              []any{"http://127.0.0.1:1/x.mp4", map[string]any{"policy": "uniform", "frames": 2}, 403},
		"missing":          []any{"nope.mp4", map[string]any{"policy": "uniform", "frames": 2}, 404},
		"unplannable":      []any{"video_90.mov", map[string]any{"policy": "uniform", "frames": 32}, 422},
		"fractional":       []any{"nasa_13013.mp4", map[string]any{"policy": "uniform", "frames": 8.5}, 400},
	}
	expFile := filepath.Join(t.TempDir(), "expect.json")
	b, _ := json.Marshal(exp)
	os.WriteFile(expFile, b, 0o644)
	env := []string{"PYTHONPATH=" + pydir, "FRAMESWEEP_URL=" + p.url, "FRAMESWEEP_EXPECT=" + expFile, "FRAMESWEEP_TOKEN_FILE=" + tokenFile, "PYTHONDONTWRITEBYTECODE=1"}
	out := runPython(t, py, env, filepath.Join(pydir, "tests", "client_test.py"))
	var got struct {
		Cases []struct {
			Key, SHA256 string
			Shape       []int
			Object      string `json:"object_key"`
		}
		Errors map[string]any
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Cases) != len(cases) || len(got.Errors) != len(exp.Bad)+1 {
		t.Fatalf("client_test output %v: %s", err, out)
	}
	for i, c := range got.Cases {
		if w := exp.Cases[i]; c.Key != w.Key || c.SHA256 != w.FramesSHA256 || fmt.Sprint(c.Shape) != fmt.Sprint(w.Shape) {
			t.Fatalf("case %d: python read %+v, extract wrote %+v", i, c, w.extracted)
		}
	}
	// The whole object too: the server names the video by the path extract was given.
	req, _ := http.NewRequest(http.MethodPost, p.url+"/v1/frames", strings.NewReader(`{"video":"nasa_13013.mp4","preset":"qwen2.5-vl","frames":8,"resolution":"qwen2.5-vl"}`))
	tok, _ := os.ReadFile(tokenFile)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != exp.Cases[0].ObjectSHA256 {
		t.Fatalf("the served object is not extract's object byte for byte")
	}
	t.Logf("python client: %d configurations equal extract's (key, frames, whole object); errors %v", len(cases), got.Errors)

	// The adapters, from an installed copy of the package (pip install integrations/python).
	needPython(t, "PIL", "pip", "setuptools")
	site := pipInstall(t, py, pydir)
	video := filepath.Join(videos, "nasa_13013.mp4")
	le := serve.Request{Video: video, Preset: "lmms-eval", Frames: 8, Resolution: "64x48"}
	ve := serve.Request{Video: video, Loader: "vlmevalkit", Frames: 6, Resolution: "64x48"} // the class's default loader
	type adapterCase struct {
		Preset     string `json:"preset"`
		Frames     int    `json:"frames"`
		Resolution string `json:"resolution"`
		extracted
	}
	ax := map[string]any{"video": video,
		"lmms_eval":  adapterCase{le.Preset, le.Frames, le.Resolution, extractOne(t, video, le)},
		"vlmevalkit": adapterCase{ve.Preset, ve.Frames, ve.Resolution, extractOne(t, video, ve)},
		"oracle":     adapterOracle(t, videos)}
	b, _ = json.Marshal(ax)
	os.WriteFile(expFile, b, 0o644)
	env[0] = "PYTHONPATH=" + strings.Join([]string{filepath.Join(pydir, "tests", "standins"), site, filepath.Join(pydir, "tests")}, ":")
	env = append(env, "FRAMESWEEP_SITE="+site)
	out = runPython(t, py, env, filepath.Join(pydir, "tests", "adapters_test.py"))
	var ad struct {
		LmmsEval struct {
			Answer struct {
				Images int
				SHA256 string
			}
		} `json:"lmms_eval"`
		VLMEvalKit struct {
			Answer struct {
				Images int
				SHA256 string
			}
		} `json:"vlmevalkit"`
		Oracle struct {
			LmmsEval   [][]any `json:"lmms_eval"`
			VLMEvalKit [][]any `json:"vlmevalkit"`
		} `json:"oracle"`
	}
	if err := json.Unmarshal(out, &ad); err != nil || ad.LmmsEval.Answer.SHA256 != ax["lmms_eval"].(adapterCase).FramesSHA256 ||
		ad.VLMEvalKit.Answer.SHA256 != ax["vlmevalkit"].(adapterCase).FramesSHA256 || len(ad.Oracle.LmmsEval) == 0 || len(ad.Oracle.VLMEvalKit) == 0 {
		t.Fatalf("adapters: %v %s", err, out)
	}
	t.Logf("adapters: lmms-eval sent %d frames, VLMEvalKit %d, each equal to extract's; with their default loaders, image for image the harness readers' frames: lmms-eval %v (video, num_frm, images = read_video's), VLMEvalKit %v (video, nframe, images = the vlmevalkit loader's)",
		ad.LmmsEval.Answer.Images, ad.VLMEvalKit.Answer.Images, ad.Oracle.LmmsEval, ad.Oracle.VLMEvalKit)
}

// oracleCase is one video and budget for adapters_test.py's oracle_frames: the sha256 of each frame
// the harness's reader returns, in order.
type oracleCase struct {
	Video        string   `json:"video"`
	Frames       int      `json:"frames"`
	FrameSHA256s []string `json:"frame_sha256"`
}

// adapterOracle is what the adapters, with their default loaders, must hand the model: for lmms-eval
// what its read_video returns (the upstream code run as an oracle: the first of two streams of the
// nasa clip, the rotated .mov not rotated, every frame of the .webm), for VLMEvalKit the vlmevalkit
// loader's frames (decord does not install here: written from upstream, docs/loaders.md).
func adapterOracle(t *testing.T, videos string) map[string][]oracleCase {
	nasa, v90, webm := filepath.Join(videos, "nasa_13013.mp4"), filepath.Join(videos, "video_90.mov"), filepath.Join(videos, "bear-vp9-odd-dimensions.webm")
	out := map[string][]oracleCase{}
	for _, budget := range []int{8, 16} {
		vids := []string{nasa}
		if budget == 8 {
			vids = append(vids, v90, webm)
		}
		for v, r := range runLoaderOracle(t, "lmms-eval", budget, vids...) {
			out["lmms_eval"] = append(out["lmms_eval"], oracleCase{v, budget, r.Frames})
		}
	}
	for _, c := range []struct {
		v string
		n int
	}{{nasa, 8}, {v90, 2}} {
		res, errs, err := pipeline.RunLoader(context.Background(), pipeline.VideoRef{Path: c.v}, loader.VLMEvalKit, []loader.Request{{Frames: c.n}}, load.Options{})
		if err != nil || errs[0] != nil {
			t.Fatal(err, errs)
		}
		oc := oracleCase{Video: c.v, Frames: c.n}
		for _, f := range res[0].Frames {
			h := sha256.Sum256(f.Image.Packed())
			oc.FrameSHA256s = append(oc.FrameSHA256s, hex.EncodeToString(h[:]))
		}
		out["vlmevalkit"] = append(out["vlmevalkit"], oc)
	}
	return out
}

// pipInstall installs a copy of integrations/python into a --target directory (no network, no
// dependencies: numpy is Debian's) and checks the lmms-eval entry point was installed.
func pipInstall(t *testing.T, py, pydir string) string {
	t.Helper()
	src, site := filepath.Join(t.TempDir(), "src"), filepath.Join(t.TempDir(), "site")
	if out, err := exec.Command("cp", "-r", pydir, src).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	os.RemoveAll(filepath.Join(src, "tests"))
	cmd := exec.Command(py, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "--no-cache-dir", "--disable-pip-version-check", "--target", site, src)
	cmd.Env = append(os.Environ(), "PIP_NO_INPUT=1", "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pip install integrations/python: %v\n%s", err, out)
	}
	ep, err := os.ReadFile(mustGlob(t, filepath.Join(site, "framesweep_client-*.dist-info", "entry_points.txt")))
	if err != nil || !strings.Contains(string(ep), "[lmms_eval.models]") || !strings.Contains(string(ep), "framesweep = framesweep_client.lmms_eval_plugin:manifest") {
		t.Fatalf("entry points %q: %v", ep, err)
	}
	return site
}

// serveLoad: 200 requests, 16 at a time, over 4 videos and 24 configurations (an LRU of 4 MiB, so
// fresh decodes, shared passes, joined builds and LRU hits mix), against the binary: no error, every
// object intact, peak RSS within the documented bound and not growing with the request count.
func serveLoad(t *testing.T, bin, videos string) {
	const (
		total, parallel = 200, 16
		inflight        = 16
		maxRespMB       = 64
		lruMB           = 4
	)
	p := startServe(t, bin, "--root", videos, "--max-inflight", strconv.Itoa(inflight), "--max-response-mb", strconv.Itoa(maxRespMB), "--lru-mb", strconv.Itoa(lruMB))
	pid := p.cmd.Process.Pid
	base := procStatus(t, pid, "VmRSS")
	var reqs []serve.Request
	for _, v := range []string{"nasa_13013.mp4", "bear-vp9-odd-dimensions.webm", "h265_video.mp4", "video_90.mov"} {
		for _, c := range []serve.Request{
			{Policy: "uniform", Frames: 3, Resolution: "224x224"},
			{Preset: "lmms-eval", Frames: 3, Resolution: "64x48"},
			{Preset: "vlmevalkit", Frames: 3, Resolution: "448x448", Pipeline: "cached"},
			{Preset: "qwen2.5-vl", Frames: 2, Resolution: "qwen2.5-vl"},
			{Policy: "random", Frames: 3, Seed: 1, Resolution: "short:128+crop:112"},
			{Preset: "lmms-eval", Frames: 3, Resolution: "96x96", DType: "f16"},
		} {
			c.Video = v
			reqs = append(reqs, c)
		}
	}
	client := &http.Client{Timeout: 120 * time.Second}
	var mu sync.Mutex
	var failures []string
	retries := 0
	var midHWM int64
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range total {
		sem <- struct{}{}
		if i == total/2 {
			midHWM = procStatus(t, pid, "VmHWM")
		}
		wg.Go(func() {
			defer func() { <-sem }()
			body, _ := json.Marshal(reqs[(i*7)%len(reqs)])
			for attempt := 0; ; attempt++ {
				res, err := client.Post(p.url+"/v1/frames", "application/json", bytes.NewReader(body))
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					return
				}
				b, err := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusServiceUnavailable && attempt < 50 {
					mu.Lock()
					retries++
					mu.Unlock()
					time.Sleep(20 * time.Millisecond)
					continue
				}
				f, perr := cache.ParseSafetensors(b)
				var ok bool
				if err == nil && perr == nil && res.StatusCode == 200 {
					sum := sha256.Sum256(f.Tensors["frames"].Data)
					ok = hex.EncodeToString(sum[:]) == res.Header.Get("X-Framesweep-Frames-Sha256") && f.Metadata["key"] == res.Header.Get("X-Framesweep-Key")
				}
				if !ok {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %d %v %v %.200s", body, res.StatusCode, err, perr, b))
					mu.Unlock()
				}
				return
			}
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	hwm := procStatus(t, pid, "VmHWM")
	res, err := http.Get(p.url + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	var h serve.Health
	json.NewDecoder(res.Body).Decode(&h)
	res.Body.Close()
	if len(failures) > 0 {
		t.Fatalf("%d of %d requests failed; first: %s", len(failures), total, failures[0])
	}
	// Bound: the idle process, plus the requests in flight (each ≤ its object while it is built, and
	// the response it is sent from), the LRU, and what a pass holds besides outputs (decoded source
	// frames in flight, FFmpeg's frame threads, resize scratch: ≈ 100 MiB measured for extract,
	// docs/pipeline.md), with the Go heap's GOGC=100 headroom on top.
	largest := int64(3 * 448 * 448 * 3)
	boundKB := base + 2*(int64(inflight)*largest+lruMB<<20)/1024 + 200<<10
	t.Logf("load: %d requests, %d at a time, %.1fs wall, %.1f requests/s, %d retried 503s; RSS idle %d MiB, peak %d MiB after %d requests and %d MiB after %d (bound %d MiB); %d passes, %d objects built, %d LRU hits, %d joined builds, %d frames decoded",
		total, parallel, wall.Seconds(), float64(total)/wall.Seconds(), retries, base>>10, midHWM>>10, total/2, hwm>>10, total, boundKB>>10,
		h.Stats.Passes, h.Stats.ObjectsBuilt, h.Stats.LRUHits, h.Stats.JoinedBuilds, h.Stats.FramesDecoded)
	if hwm > boundKB {
		t.Fatalf("peak RSS %d MiB over the bound %d MiB", hwm>>10, boundKB>>10)
	}
	if retries != 0 || h.Stats.Errors != 0 || h.Stats.Overloaded != 0 || h.Stats.Inflight != 0 || h.Stats.Requests != total+1 {
		t.Fatalf("server counters: %+v (retries %d)", h.Stats, retries)
	}
	serveMemory(t, bin, videos)
}

// serveMemory: large objects under the default --max-inflight 4 — 12 objects of about 96 MiB, 4 at a
// time, an LRU of 128 MiB (it holds one) — against the stated bound (docs/serve.md, "Memory"): peak
// RSS ≤ start RSS + 1.25 × (max-inflight × the largest object + the LRU) + 64 MiB per slot, and
// once idle RSS ≤ start RSS + the LRU + 128 MiB. Before the collections at drop points the peak was
// about twice the objects in flight and stayed there idle.
func serveMemory(t *testing.T, bin, videos string) {
	const (
		inflight, total = 4, 12
		lruMB           = 128
		slotSlack       = 64 << 20
	)
	p := startServe(t, bin, "--root", videos, "--max-inflight", strconv.Itoa(inflight), "--max-response-mb", "100", "--lru-mb", strconv.Itoa(lruMB))
	pid := p.cmd.Process.Pid
	base := procStatus(t, pid, "VmRSS") << 10
	client := &http.Client{Timeout: 120 * time.Second}
	var largest atomic.Int64
	errs := make(chan error, total)
	sem := make(chan struct{}, inflight)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range total {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			body, _ := json.Marshal(serve.Request{Video: "nasa_13013.mp4", Policy: "uniform", Frames: 32, Resolution: fmt.Sprintf("%dx1024", 1024-16*i)})
			res, err := client.Post(p.url+"/v1/frames", "application/json", bytes.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			n, err := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode != 200 {
				errs <- fmt.Errorf("%s: %d %v", body, res.StatusCode, err)
				return
			}
			for old := largest.Load(); n > old && !largest.CompareAndSwap(old, n); old = largest.Load() {
			}
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	peak := procStatus(t, pid, "VmHWM") << 10
	// Idle: the last request returned what was collected to the OS (in the background); RSS is read
	// until two samples 200 ms apart agree within 2 MiB (or 5 s pass).
	idleBound := base + lruMB<<20 + 128<<20
	idle := procStatus(t, pid, "VmRSS") << 10
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		prev := idle
		if idle = procStatus(t, pid, "VmRSS") << 10; max(idle-prev, prev-idle) <= 2<<20 {
			break
		}
	}
	L := largest.Load()
	peakBound := base + (inflight*L+lruMB<<20)*5/4 + inflight*slotSlack
	t.Logf("memory: %d objects of up to %d MiB, %d at a time, %.1fs: RSS at start %d MiB, peak %d MiB (bound %d MiB: %d × the largest + the LRU = %d MiB), idle %d MiB (bound %d MiB)",
		total, L>>20, inflight, wall.Seconds(), base>>20, peak>>20, peakBound>>20, inflight, (inflight*L+lruMB<<20)>>20, idle>>20, idleBound>>20)
	if peak > peakBound {
		t.Errorf("peak RSS %d MiB over the bound %d MiB", peak>>20, peakBound>>20)
	}
	if idle > idleBound {
		t.Errorf("idle RSS %d MiB over the bound %d MiB 5 s after the last response", idle>>20, idleBound>>20)
	}
}

// TestLoopback: which --addr listens on loopback only (the usage errors of serve are in
// TestUsageErrors).
func TestLoopback(t *testing.T) {
	for _, a := range []string{"127.0.0.1:0", "[::1]:8765", "localhost:1"} {
		if !loopback(a) {
			t.Errorf("%s: not seen as loopback", a)
		}
	}
	for _, a := range []string{"0.0.0.0:1", ":1", "10.0.0.1:1", "example.org:80", "garbage"} {
		if loopback(a) {
			t.Errorf("%s: seen as loopback", a)
		}
	}
}

// TestServeTokenFile: --token-file is read only from a regular file of at most 4 KiB. A FIFO (which
// blocks a reader until a writer comes), /dev/zero (which never ends) and a link to it, a directory and
// an oversized file are each refused at once with one line naming the file, exit 1. Each case runs in
// a child process (this test binary) watched from here: killed after 20 s or beyond 512 MiB of RSS,
// which is a failure.
func TestServeTokenFile(t *testing.T) {
	if p := os.Getenv("FRAMESWEEP_TOKEN_CHILD"); p != "" {
		os.Exit(dispatch([]string{"serve", "--root", os.TempDir(), "--addr", "127.0.0.1:0", "--token-file", p}, io.Discard, os.Stderr))
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, bytes.Repeat([]byte("x"), 5000), 0o600)
	zeroLink := filepath.Join(dir, "zero-link")
	os.Symlink("/dev/zero", zeroLink)
	for _, c := range []struct{ path, msg string }{
		{fifo, "not a named pipe (FIFO)"},
		{"/dev/zero", "not a character device"},
		{zeroLink, "not a character device"},
		{dir, "not a directory"},
		{big, "5000 bytes"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestServeTokenFile$")
		cmd.Env = append(os.Environ(), "FRAMESWEEP_TOKEN_CHILD="+c.path)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var why string
		deadline := time.After(20 * time.Second)
	watch:
		for {
			select {
			case <-done:
				break watch
			case <-deadline:
				why = "still running after 20 s"
			case <-time.After(10 * time.Millisecond):
				if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil {
					for _, l := range strings.Split(string(b), "\n") {
						if f := strings.Fields(l); len(f) > 1 && f[0] == "VmRSS:" {
							if kb, _ := strconv.ParseInt(f[1], 10, 64); kb > 512<<10 {
								why = fmt.Sprintf("%d MiB of RSS", kb>>10)
							}
						}
					}
				}
			}
			if why != "" {
				cmd.Process.Kill()
				<-done
				break watch
			}
		}
		if why != "" {
			t.Errorf("--token-file %s: killed: %s", c.path, why)
			continue
		}
		line := strings.TrimSpace(errb.String())
		if code := cmd.ProcessState.ExitCode(); code != exitError || strings.Count(line, "\n") != 0 || !strings.Contains(line, c.path) || !strings.Contains(line, c.msg) {
			t.Errorf("--token-file %s: exit %d, stderr %q (want exit %d, one line naming it: %s)", c.path, code, line, exitError, c.msg)
		}
	}
}
