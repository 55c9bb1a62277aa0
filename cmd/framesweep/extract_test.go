package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io/fs"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framesweep/framesweep/bench"
	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/rgb"
	"github.com/framesweep/framesweep/sampler"
)

const exGrid = `name: extract-test
frames: [4, 8]
policies: [uniform]
resolutions: ["64x48", "short:40+crop:32"]
pipelines: [raw, cached]
`

func exWriteGrid(t testing.TB, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "grid.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// exRun runs `framesweep extract` in process and decodes its summary.
func exRun(t testing.TB, args ...string) (int, extract.Summary, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := dispatch(append([]string{"extract"}, args...), &out, &errb)
	var sum extract.Summary
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
			t.Fatalf("summary is not JSON: %v\n%s", err, out.String())
		}
	}
	return code, sum, errb.String()
}

// exTree returns every file under dir except manifests and leftovers, by relative path.
func exTree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if e.IsDir() || strings.HasPrefix(rel, "manifests") {
			return nil
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func exSameTree(t testing.TB, a, b map[string][]byte) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d files vs %d", len(a), len(b))
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			t.Fatalf("%s differs or is missing", k)
		}
	}
}

// TestExtractReproducible: the same grid twice, and --jobs 1 vs --jobs 2, give identical keys and
// bytes; a second run into the same cache verifies and skips everything; bad videos are reported
// and skipped while the others are written.
func TestExtractReproducible(t *testing.T) {
	t.Parallel()
	grid := exWriteGrid(t, exGrid)
	videos := []string{
		testenv.SharedVideo(t, "torchcodec/nasa_13013.mp4"),
		testenv.SharedVideo(t, "androidx-media/sample_audio_only.mp4"), // no video stream
		testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4"),
		testenv.SharedVideo(t, "androidx-media/sample_malformed_free_box.mp4"), // FFmpeg cannot open it
	}
	d1, d2 := t.TempDir(), t.TempDir()
	args := func(out, jobs string) []string {
		return append([]string{"--grid", grid, "--out", out, "--jobs", jobs, "--videos"}, videos...)
	}
	code, s1, stderr := exRun(t, args(d1, "1")...)
	if code != exitError || s1.VideosFailed != 2 || len(s1.Failed) != 2 {
		t.Fatalf("exit %d, summary %+v\n%s", code, s1, stderr)
	}
	for _, f := range s1.Failed {
		if !strings.Contains(f.Error, f.Path) {
			t.Errorf("error does not name the file: %q", f.Error)
		}
	}
	// 2 good videos × 8 configs (2 budgets × 2 sizes × 2 pipelines).
	if s1.ObjectsWritten != 16 || s1.ObjectsSkipped != 0 {
		t.Fatalf("written %d skipped %d", s1.ObjectsWritten, s1.ObjectsSkipped)
	}
	// Decode once: every needed frame decoded exactly once, the union of all plans.
	for _, v := range s1.PerVideo {
		if v.Written > 0 && (v.FramesDecoded != v.FramesUnion || v.FramesUnion >= v.FramesRequested) {
			t.Errorf("%s: decoded %d, union %d, requested %d", v.Path, v.FramesDecoded, v.FramesUnion, v.FramesRequested)
		}
		// The floor made visible: packets sent against the reference-chain minimum (issue 27: ≤ 1.02).
		if v.Written > 0 && (v.PacketsMin == 0 || float64(v.PacketsSent) > 1.02*float64(v.PacketsMin)) {
			t.Errorf("%s: %d packets sent, floor %d", v.Path, v.PacketsSent, v.PacketsMin)
		}
	}
	if s1.PacketsMin == 0 || s1.PacketsSent < s1.PacketsMin {
		t.Errorf("summary: %d packets sent, floor %d", s1.PacketsSent, s1.PacketsMin)
	}
	if code, s2, _ := exRun(t, args(d2, "2")...); code != exitError || s2.ObjectsWritten != 16 {
		t.Fatalf("jobs 2: exit %d %+v", code, s2)
	}
	t1 := exTree(t, d1)
	exSameTree(t, t1, exTree(t, d2))

	// Rerun into d1: all verified and skipped, nothing rewritten.
	code, s3, _ := exRun(t, args(d1, "2")...)
	if code != exitError || s3.ObjectsWritten != 0 || s3.ObjectsSkipped != 16 || s3.FramesDecoded != 0 {
		t.Fatalf("rerun: exit %d %+v", code, s3)
	}
	exSameTree(t, t1, exTree(t, d1))

	// The manifest has one line per (video, config, pipeline) with PSNR for the cached pipeline, and
	// one line per video that could not be read, naming it.
	mb, err := os.ReadFile(s1.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(mb)), "\n")
	if len(lines) != 18 {
		t.Fatalf("manifest has %d lines", len(lines))
	}
	var cached, failed int
	for _, l := range lines {
		var m extract.ManifestLine
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m.Status == "failed" {
			failed++
			if m.Video != videos[1] && m.Video != videos[3] || !strings.Contains(m.Error, m.Video) {
				t.Fatalf("failed line %+v", m)
			}
			continue
		}
		if m.Status != "written" {
			t.Fatalf("line %+v", m)
		}
		if m.Pipeline == cache.PipelineCached {
			cached++
			if len(m.PSNR) != len(m.Indices) || m.PSNR[0] == nil || *m.PSNR[0] < 20 || *m.PSNR[0] > 60 {
				t.Fatalf("cached object PSNR %v", m.PSNR)
			}
		}
		if _, err := os.Stat(m.Object); err != nil {
			t.Fatal(err)
		}
	}
	if cached != 8 || failed != 2 {
		t.Fatalf("%d cached objects, %d failed lines", cached, failed)
	}
}

// TestExtractVerifyCatchesDamage: a flipped byte or a truncated object is caught by `verify` (exit 1,
// listed) and on read. The next extract rebuilds a truncated object (its size no longer matches the
// ref); a flipped data byte passes extract's header-only skip check, and `extract --rehash` rebuilds it.
func TestExtractVerifyCatchesDamage(t *testing.T) {
	grid := exWriteGrid(t, "frames: [4]\npolicies: [uniform]\nresolutions: [\"32x32\"]\n")
	video := testenv.SharedVideo(t, "torchcodec/nasa_13013.mp4")
	dir := t.TempDir()
	if code, s, e := exRun(t, "--grid", grid, "--out", dir, "--videos", video); code != 0 || s.ObjectsWritten != 1 {
		t.Fatalf("exit %d %+v %s", code, s, e)
	}
	var out, errb bytes.Buffer
	if code := dispatch([]string{"verify", dir}, &out, &errb); code != 0 {
		t.Fatalf("verify clean cache: %d %s", code, errb.String())
	}
	objs, _ := filepath.Glob(filepath.Join(dir, "cas", "sha256", "*", "*"))
	if len(objs) != 1 {
		t.Fatalf("objects %v", objs)
	}
	orig, _ := os.ReadFile(objs[0])
	for name, damage := range map[string]func([]byte) []byte{
		"flip":  func(b []byte) []byte { b[len(b)/2] ^= 0x01; return b },
		"trunc": func(b []byte) []byte { return b[:len(b)-100] },
	} {
		t.Run(name, func(t *testing.T) {
			os.WriteFile(objs[0], damage(append([]byte(nil), orig...)), 0o644)
			var out, errb bytes.Buffer
			code := dispatch([]string{"verify", dir}, &out, &errb)
			var rep cache.Report
			testenv.DecodeJSON(t, out.Bytes(), &rep)
			if code != exitError || len(rep.Problems) == 0 || rep.Problems[0].Kind != "corrupt" || !strings.Contains(errb.String(), objs[0]) {
				t.Fatalf("verify: exit %d %+v %s", code, rep, errb.String())
			}
			s, _ := cache.Open(context.Background(), dir)
			key := strings.TrimSuffix(filepath.Base(mustGlob(t, filepath.Join(dir, "ac", "*", "*.json"))), ".json")
			if _, _, err := s.Load(context.Background(), key); err == nil {
				t.Fatal("read of a damaged object succeeded")
			}
			// extract rebuilds it, byte for byte.
			args := []string{"--grid", grid, "--out", dir, "--videos", video}
			if name == "flip" {
				if code, s, _ := exRun(t, args...); code != 0 || s.ObjectsSkipped != 1 {
					t.Fatalf("header-only check: exit %d %+v", code, s)
				}
				args = append(args, "--rehash")
			}
			if code, s, _ := exRun(t, args...); code != 0 || s.ObjectsWritten != 1 {
				t.Fatalf("rebuild: exit %d %+v", code, s)
			}
			if b, _ := os.ReadFile(objs[0]); !bytes.Equal(b, orig) {
				t.Fatal("rebuilt object differs")
			}
		})
	}
}

func mustGlob(t testing.TB, pat string) string {
	t.Helper()
	m, _ := filepath.Glob(pat)
	if len(m) != 1 {
		t.Fatalf("%s: %v", pat, m)
	}
	return m[0]
}

// TestExtractSIGKILL kills a real extract process at random moments, repeatedly, checking after each
// kill that the cache holds no corrupt or dangling object; a final run completes the cache, which then
// equals the cache of an uninterrupted run byte for byte.
func TestExtractSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills the binary")
	}
	bin := testenv.Binary(t)
	grid := exWriteGrid(t, "frames: [4, 8, 16]\npolicies: [uniform]\nresolutions: [\"96x64\", \"64x64\"]\npipelines: [raw, cached]\n")
	videos := []string{
		testenv.SharedVideo(t, "torchcodec/nasa_13013.mp4"),
		testenv.SharedVideo(t, "androidx-media/bbb_800x640_768kbps_30fps_avc_pyramid_3b.mp4"),
		testenv.SharedVideo(t, "androidx-media/sample_fragmented.mp4"),
	}
	run := func(dir string) *exec.Cmd {
		return exec.Command(bin, append([]string{"extract", "--grid", grid, "--out", dir, "--jobs", "2", "--videos"}, videos...)...)
	}
	ref := t.TempDir()
	t0 := time.Now()
	if out, err := run(ref).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	full := time.Since(t0)
	want := exTree(t, ref)

	dir := t.TempDir()
	// A fixed seed, as the other kill tests have: the kill moments are the same fractions of the
	// reference run on every run, and a failure names its seed and delay.
	const seed = 13
	t.Logf("kill moments from seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	killed, leftovers := 0, 0
	for i := 0; i < 8; i++ {
		cmd := run(dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Runs after the first get faster (objects are skipped), so kill within the first half.
		delay := time.Duration(rng.Int63n(int64(full)/2 + 1))
		timer := time.AfterFunc(delay, func() { cmd.Process.Signal(syscall.SIGKILL) })
		err := cmd.Wait()
		timer.Stop()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++
		} else if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		s, err := cache.Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := s.Verify(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// No corrupt or dangling object ever; the killed run's temps are leftovers (a problem for
		// verify) until the next run removes them.
		for _, p := range rep.Problems {
			if p.Kind != "leftover" {
				t.Fatalf("after kill %d at %v (seed %d): %+v", i, delay, seed, rep)
			}
			leftovers++
		}
		if len(rep.InFlight) != 0 {
			t.Fatalf("after kill %d: temps held by a live writer: %v", i, rep.InFlight)
		}
	}
	t.Logf("%d of 8 runs killed (full run %v); %d leftover temp files seen by verify", killed, full, leftovers)
	if killed < 2 {
		t.Fatalf("only %d of 8 runs were killed before finishing: the test did not test", killed)
	}
	if out, err := run(dir).CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	got := exTree(t, dir)
	// The reruns removed every temp file the killed runs left.
	for k := range got {
		if strings.HasPrefix(filepath.Base(k), ".tmp-") {
			t.Errorf("temp file left after the final run: %s", k)
		}
	}
	if s, err := cache.Open(context.Background(), dir); err != nil {
		t.Fatal(err)
	} else if rep, err := s.Verify(context.Background()); err != nil || !rep.Clean() {
		t.Fatalf("after the final run: %+v %v", rep, err)
	}
	// Orphan objects (written just before a kill, before their ref) may remain only if identical to
	// the reference objects, since the same key always yields the same bytes.
	exSameTree(t, want, got)

	// Two processes extracting into one cache at the same time: both succeed, same cache.
	both := t.TempDir()
	a, b := run(both), run(both)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	if err1, err2 := a.Wait(), b.Wait(); err1 != nil || err2 != nil {
		t.Fatalf("concurrent runs: %v, %v", err1, err2)
	}
	exSameTree(t, want, exTree(t, both))
}

// exPyReader is the short safetensors reader shown in docs/cache.md.
const exPyReader = `
import json, struct, sys
import numpy as np

def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    dtypes = {"U8": np.uint8, "F16": np.float16, "F32": np.float32, "I64": np.int64}
    out = {}
    for name, t in header.items():
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(data[b:e], dtype=np.dtype(dtypes[t["dtype"]]).newbyteorder("<")).reshape(t["shape"])
    return out, meta

tensors, meta = load_safetensors(sys.argv[1])
f = tensors["frames"]
json.dump({"shape": list(f.shape), "dtype": str(f.dtype), "indices": tensors["indices"].tolist(),
           "sum": float(f.astype(np.float64).sum()), "first": f.reshape(-1)[:16].astype(np.float64).tolist(),
           "pipeline": meta["pipeline"], "config": meta["config"]}, sys.stdout)
`

// TestExtractPythonReadsObject reads extracted objects (uint8 and float16) with Debian's python3 +
// numpy and compares the tensor with what Go reads.
func TestExtractPythonReadsObject(t *testing.T) {
	t.Parallel()
	py := testenv.NeedPython(t, "numpy")
	video := testenv.SharedVideo(t, "torchcodec/nasa_13013.mp4")
	grid := exWriteGrid(t, "frames: [6]\npolicies: [uniform]\nresolutions: [\"48x32\"]\npipelines: [cached]\n")
	for _, dtype := range []string{"u8", "f16", "f32"} {
		t.Run(dtype, func(t *testing.T) {
			dir := t.TempDir()
			code, sum, e := exRun(t, "--grid", grid, "--out", dir, "--dtype", dtype, "--norm", "clip", "--videos", video)
			if code != 0 || sum.ObjectsWritten != 1 {
				t.Fatalf("exit %d %+v %s", code, sum, e)
			}
			obj := mustGlob(t, filepath.Join(dir, "cas", "sha256", "*", "*"))
			out, err := exec.Command(py, "-c", exPyReader, obj).Output()
			if err != nil {
				t.Fatalf("python: %v", err)
			}
			var got struct {
				Shape    []int
				DType    string
				Indices  []int
				Sum      float64
				First    []float64
				Pipeline string
				Config   string
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			b, _ := os.ReadFile(obj)
			f, err := cache.ParseSafetensors(b)
			if err != nil {
				t.Fatal(err)
			}
			fr := f.Tensors["frames"]
			vals := exValues(fr)
			var s float64
			for _, v := range vals {
				s += v
			}
			if !equalInts(got.Shape, fr.Shape) || !equalInts(got.Shape, []int{6, 32, 48, 3}) {
				t.Fatalf("shape python %v go %v", got.Shape, fr.Shape)
			}
			if math.Abs(got.Sum-s) > 1e-6*math.Max(1, math.Abs(s)) || got.Pipeline != "cached" || len(got.Indices) != 6 {
				t.Fatalf("python %+v, go sum %v", got, s)
			}
			for i, v := range got.First {
				if v != vals[i] {
					t.Fatalf("element %d: python %v go %v", i, v, vals[i])
				}
			}
		})
	}
}

// exValues decodes a tensor's elements to float64 (U8, F16, F32).
func exValues(t cache.Tensor) []float64 {
	var out []float64
	switch t.DType {
	case cache.U8:
		for _, b := range t.Data {
			out = append(out, float64(b))
		}
	case cache.F32:
		for i := 0; i < len(t.Data); i += 4 {
			out = append(out, float64(math.Float32frombits(binary.LittleEndian.Uint32(t.Data[i:]))))
		}
	case cache.F16:
		for i := 0; i < len(t.Data); i += 2 {
			out = append(out, halfToFloat(binary.LittleEndian.Uint16(t.Data[i:])))
		}
	}
	return out
}

func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0:
		return sign * m * math.Pow(2, -24)
	case 31:
		return sign * math.Inf(1)
	}
	return sign * (1 + m/1024) * math.Pow(2, float64(e-15))
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// exBenchGrid is the 6-config grid of the benchmark: 3 budgets × 2 sizes, raw pipeline.
const exBenchGrid = "frames: [8, 16, 32]\npolicies: [uniform]\nresolutions: [\"448x448\", \"224x224\"]\npipelines: [raw]\n"

// BenchmarkExtractGrid extracts a 6-config grid from a 1080p video and, in the same iterations, decodes
// the same union of frames once without resizing or writing (the decode-once baseline); it reports
// both times and their ratio, and fails if extract decodes any frame more than once. Two videos: the
// 270-frame androidx clip (28 KB: decoding is nearly free, so the ratio is dominated by the resizes and
// writes, the worst case) and the foundation benchmark's 60 s 1080p30 H.264 GOP-250 clip (bench.BenchClip,
// generated once with the ffmpeg CLI into bench.CacheDir()). One sub-benchmark per video and kernel:
// Pillow-exact bicubic (the default) and OpenCV bilinear.
func BenchmarkExtractGrid(b *testing.B) {
	gridPath := exWriteGrid(b, exBenchGrid)
	g, err := grid.Load(gridPath)
	if err != nil {
		b.Fatal(err)
	}
	videos := []struct{ name, path string }{
		{"edit_list_positive_shift", testenv.SharedVideo(b, "androidx-media/edit_list_positive_shift.mp4")}, // 1920x1080 H.264, 270 frames, GOP 250
		{"testsrc2-60s-gop250", ""},
	}
	for _, vid := range videos {
		for _, kernel := range []string{"pil-bicubic", "cv-linear"} {
			b.Run("video="+vid.name+"/src=1920x1080/configs=6/kernel="+kernel, func(b *testing.B) {
				video := vid.path
				if video == "" {
					var err error
					testenv.Need(b, "ffmpeg")
					if video, err = bench.EnsureClip(context.Background(), bench.CacheDir(), bench.BenchClip(250)); err != nil {
						b.Fatalf("foundation clip: %v", err)
					}
				}
				benchExtract(b, g, gridPath, video, kernel)
			})
		}
	}
}

func benchExtract(b *testing.B, g *grid.Grid, gridPath, video, kernel string) {
	v, err := decode.Open(video, decode.Options{})
	if err != nil {
		b.Fatal(err)
	}
	info := v.Info()
	var plans []sampler.Selection
	for _, cp := range g.SelectAll(sampler.Video{Frames: info.Frames, FPS: info.FPS, DurationS: info.DurationS}) {
		if cp.Err != nil {
			b.Fatal(cp.Err)
		}
		plans = append(plans, cp.Selection)
	}
	v.Close()
	union := sampler.Union(plans...)
	var tDecode, tExtract time.Duration
	var cDecode, cExtract float64
	for b.Loop() {
		c0, t0 := exCPUSeconds(), time.Now()
		v, err := decode.Open(video, decode.Options{})
		if err != nil {
			b.Fatal(err)
		}
		st, err := v.Read(union.Indices, func(*decode.Frame) error { return nil })
		v.Close()
		if err != nil || st.Converted != union.Size {
			b.Fatalf("decode-once: %v, %d of %d frames", err, st.Converted, union.Size)
		}
		c1, t1 := exCPUSeconds(), time.Now()
		code, sum, stderr := exRun(b, "--grid", gridPath, "--out", b.TempDir(), "--kernel", kernel, "--videos", video)
		tExtract += time.Since(t1)
		cExtract += exCPUSeconds() - c1
		tDecode += t1.Sub(t0)
		cDecode += c1 - c0
		if code != 0 || sum.ObjectsWritten != 6 || sum.FramesDecoded != union.Size || sum.FramesUnion != union.Size {
			b.Fatalf("extract: exit %d, %+v (union %d) %s", code, sum, union.Size, stderr)
		}
	}
	n := float64(b.N)
	b.ReportMetric(tDecode.Seconds()/n, "decode-once-s/op")
	b.ReportMetric(tExtract.Seconds()/n, "extract-s/op")
	b.ReportMetric(tExtract.Seconds()/tDecode.Seconds(), "extract/decode")
	// CPU time (user+sys of this process, FFmpeg's threads included) moves far less than wall time
	// with other load on a shared machine.
	b.ReportMetric(cDecode/n, "decode-once-cpu-s/op")
	b.ReportMetric(cExtract/n, "extract-cpu-s/op")
	b.ReportMetric(cExtract/cDecode, "extract/decode-cpu")
	b.ReportMetric(float64(union.Size), "union-frames")
	b.ReportMetric(float64(union.Requested), "requested-frames")
}

// exCPUSeconds is the user+sys CPU time this process has used so far.
func exCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// TestExtractContent checks the stored pixels against an independent computation from the decoded
// frames: resize (fixed size), resize + centre crop, and InternVL-style tiles + thumbnail, through the
// raw and the cached (JPEG q75) pipeline.
func TestExtractContent(t *testing.T) {
	t.Parallel()
	video := testenv.SharedVideo(t, "torchcodec/nasa_13013.mp4")
	for _, res := range []string{"40x24", "short:30+crop:24", "internvl3:max_num=4,tile=16"} {
		t.Run(res, func(t *testing.T) {
			gridFile := exWriteGrid(t, "frames: [5]\npolicies: [uniform]\nresolutions: [\""+res+"\"]\npipelines: [raw, cached]\n")
			dir := t.TempDir()
			code, sum, e := exRun(t, "--grid", gridFile, "--out", dir, "--videos", video)
			if code != 0 || sum.ObjectsWritten != 2 {
				t.Fatalf("exit %d %+v %s", code, sum, e)
			}
			g, err := grid.Load(gridFile)
			if err != nil {
				t.Fatal(err)
			}
			v, err := decode.Open(video, decode.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			info := v.Info()
			s, err := cache.Open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			mb := testenv.ReadFile(t, sum.Manifest)
			for _, line := range strings.Split(strings.TrimSpace(string(mb)), "\n") {
				var m extract.ManifestLine
				testenv.DecodeJSON(t, []byte(line), &m)
				f, _, err := s.Load(context.Background(), m.Key)
				if err != nil {
					t.Fatal(err)
				}
				var cfg *grid.Config
				for i := range g.Configs {
					if g.Configs[i].ID == m.Config {
						cfg = &g.Configs[i]
					}
				}
				lay, err := cfg.Geometry().Layout(info.OutWidth, info.OutHeight, len(m.Indices))
				if err != nil {
					t.Fatal(err)
				}
				var want []byte
				_, err = v.Read(m.Indices, func(fr *decode.Frame) error {
					src := fr.Image.Clone()
					if m.Pipeline == cache.PipelineCached {
						if src, err = resize.JPEGRoundTrip(src, 75); err != nil {
							return err
						}
					}
					rs, err := resize.Resize(resize.DefaultKernel, src, lay.Resize.W, lay.Resize.H)
					if err != nil {
						return err
					}
					switch {
					case len(lay.Tiles) > 0:
						for _, tl := range lay.Tiles {
							want = exRect(want, rs, tl)
						}
						if lay.Thumb != nil {
							th, err := resize.Resize(resize.DefaultKernel, src, lay.Thumb.W, lay.Thumb.H)
							if err != nil {
								return err
							}
							want = append(want, th.Packed()...)
						}
					case lay.Crop != nil:
						want = exRect(want, rs, *lay.Crop)
					default:
						want = append(want, rs.Packed()...)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				fr := f.Tensors["frames"]
				if len(lay.Tiles) > 0 && (len(fr.Shape) != 5 || fr.Shape[1] != lay.Images() || lay.Images() < 2) {
					t.Fatalf("tiled shape %v, %d images", fr.Shape, lay.Images())
				}
				if !bytes.Equal(fr.Data, want) {
					t.Fatalf("%s %s: stored pixels differ from decode → %s", m.Config, m.Pipeline, map[bool]string{true: "JPEG → resize", false: "resize"}[m.Pipeline == cache.PipelineCached])
				}
				if f.Metadata["pipeline"] != m.Pipeline || f.Metadata["source_sha256"] != m.VideoSHA256 || f.Metadata["indices"] == "" {
					t.Fatalf("metadata %v", f.Metadata)
				}
			}
		})
	}
}

// exRect appends rectangle r of m, row by row (the test's own cut, independent of the engine's).
func exRect(out []byte, m *rgb.Image, r geom.Rect) []byte {
	for y := r.Y; y < r.Y+r.H; y++ {
		out = append(out, m.Pix[y*m.Stride+3*r.X:y*m.Stride+3*(r.X+r.W)]...)
	}
	return out
}

// TestExtractBlobURL: --out as a gocloud.dev/blob file:// URL gives the same objects and keys as a
// local directory, and verify accepts the URL too.
func TestExtractBlobURL(t *testing.T) {
	grid := exWriteGrid(t, "frames: [4]\npolicies: [uniform]\nresolutions: [\"32x24\"]\npipelines: [raw, cached]\n")
	video := testenv.SharedVideo(t, "torchcodec/nasa_13013.mp4")
	local, viaURL := t.TempDir(), t.TempDir()
	if code, s, e := exRun(t, "--grid", grid, "--out", local, "--videos", video); code != 0 || s.ObjectsWritten != 2 {
		t.Fatalf("local: exit %d %+v %s", code, s, e)
	}
	url := "file://" + viaURL + "?no_tmp_dir=1&metadata=skip"
	if code, s, e := exRun(t, "--grid", grid, "--out", url, "--videos", video); code != 0 || s.ObjectsWritten != 2 {
		t.Fatalf("url: exit %d %+v %s", code, s, e)
	}
	exSameTree(t, exTree(t, local), exTree(t, viaURL))
	var out, errb bytes.Buffer
	if code := dispatch([]string{"verify", url}, &out, &errb); code != 0 {
		t.Fatalf("verify %s: %d %s", url, code, errb.String())
	}
	// A second run through the URL verifies and skips.
	if code, s, _ := exRun(t, "--grid", grid, "--out", url, "--videos", video); code != 0 || s.ObjectsSkipped != 2 {
		t.Fatalf("rerun: exit %d %+v", code, s)
	}
}

// TestExtractFailedPairsSummary: pairs a video cannot give (a budget beyond its frames) are one
// summary line on stderr, with their count and the first; -v lists each. The JSON lists them all.
func TestExtractFailedPairsSummary(t *testing.T) {
	grid := exWriteGrid(t, "frames: [2, 64]\npolicies: [uniform]\nresolutions: [\"32x24\", \"16x16\"]\n")
	video := filepath.Join(repoDir(t), "testdata", "videos", "bear-vp9-odd-dimensions.webm") // 30 frames
	for _, verbose := range []bool{false, true} {
		args := []string{"--grid", grid, "--out", t.TempDir(), "--videos", video}
		if verbose {
			args = append(args, "-v")
		}
		code, s, stderr := exRun(t, args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		switch {
		case code != exitError || s.PairsFailed != 2 || s.Pairs != 4:
			t.Fatalf("-v %v: exit %d, %d of %d pairs failed: %s", verbose, code, s.PairsFailed, s.Pairs, stderr)
		case !verbose && (len(lines) != 1 || !strings.Contains(lines[0], "2 of 4 (video, config) pairs failed") || !strings.Contains(lines[0], "64 frames")):
			t.Fatalf("summary: %q", stderr)
		case verbose && (len(lines) != 2 || strings.Contains(stderr, "pairs failed")):
			t.Fatalf("-v: %q", stderr)
		}
	}
}

// TestCacheURLMissingDir: a file:// store whose directory does not exist is one line naming the URL
// and the cause (file:// stores are not created; a plain path is).
func TestCacheURLMissingDir(t *testing.T) {
	grid := exWriteGrid(t, "frames: [2]\npolicies: [uniform]\nresolutions: [\"32x24\"]\n")
	url := "file://" + filepath.Join(t.TempDir(), "nope") + "?no_tmp_dir=1"
	code, _, stderr := exRun(t, "--grid", grid, "--out", url, "--videos", filepath.Join(repoDir(t), "testdata", "videos", "video_90.mov"))
	if code != exitError || !strings.Contains(stderr, url) || !strings.Contains(stderr, "does not exist") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Fatalf("exit %d %q", code, stderr)
	}
}

// TestExtractWorker: with --worker every video is decoded in a supervised child process; the objects
// are byte-identical to in-process decoding and a bad video still fails alone.
func TestExtractWorker(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testenv.Binary(t)
	grid := exWriteGrid(t, "frames: [4, 8]\npolicies: [uniform]\nresolutions: [\"40x24\"]\npipelines: [raw, cached]\n")
	good := testenv.SharedVideo(t, "torchcodec/nasa_13013.mp4")
	bad := testenv.SharedVideo(t, "mp4ff/vvc_400kbps_2s.mp4") // no decoder in FFmpeg 5.1
	inproc, isolated := t.TempDir(), t.TempDir()
	if code, s, e := exRun(t, "--grid", grid, "--out", inproc, "--videos", good); code != 0 || s.ObjectsWritten != 4 {
		t.Fatalf("in process: exit %d %+v %s", code, s, e)
	}
	cmd := exec.Command(bin, "extract", "--grid", grid, "--out", isolated, "--worker", "--worker-timeout", "2m", "--videos", good, bad)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var sum extract.Summary
	testenv.DecodeJSON(t, stdout.Bytes(), &sum)
	if cmd.ProcessState.ExitCode() != exitError || sum.VideosFailed != 1 || sum.ObjectsWritten != 4 || !strings.Contains(stderr.String(), bad) {
		t.Fatalf("--worker: %v, %+v\n%s", err, sum, stderr.String())
	}
	exSameTree(t, exTree(t, inproc), exTree(t, isolated))
}

// TestExtractGridStream: the grid's stream: key picks the stream extract decodes (nasa_13013.mp4 has
// two: 0 at 320x180 and FFmpeg's best, 3 at 480x270); --stream overrides it; the index is in the
// manifest line.
func TestExtractGridStream(t *testing.T) {
	video := filepath.Join("..", "..", "testdata", "videos", "nasa_13013.mp4")
	for _, c := range []struct {
		grid   string
		extra  []string
		stream int
		w      int
	}{
		{"frames: [2]\npolicies: [uniform]\n", nil, 3, 480},
		{"frames: [2]\npolicies: [uniform]\nstream: 0\n", nil, 0, 320},
		{"frames: [2]\npolicies: [uniform]\nstream: 0\n", []string{"--stream", "3"}, 3, 480},
	} {
		dir := t.TempDir()
		code, sum, e := exRun(t, append([]string{"--grid", exWriteGrid(t, c.grid), "--out", dir, "--videos", video}, c.extra...)...)
		if code != exitOK {
			t.Fatalf("%q %v: exit %d %s", c.grid, c.extra, code, e)
		}
		mb := testenv.ReadFile(t, sum.Manifest)
		var m extract.ManifestLine
		testenv.DecodeJSON(t, []byte(strings.SplitN(string(mb), "\n", 2)[0]), &m)
		if m.StreamIndex == nil || *m.StreamIndex != c.stream || m.Shape[2] != c.w {
			t.Errorf("%q %v: stream %v shape %v, want stream %d width %d", c.grid, c.extra, m.StreamIndex, m.Shape, c.stream, c.w)
		}
	}
	if _, err := grid.Parse([]byte("frames: [2]\npolicies: [uniform]\nstream: 1.5\n")); err == nil {
		t.Error("stream: 1.5 accepted")
	}
}
