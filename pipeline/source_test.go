package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/resize/geom"
)

// TestOpenVideoRef: OpenVideo hashes the file unless the ref carries the digest (then it takes it as
// given, so a caller that hashed does not hash twice); OpenSource never hashes; a ref's description is
// checked against the file (ErrChanged when another file now sits at the path); a directory is refused.
func TestOpenVideoRef(t *testing.T) {
	ctx := context.Background()
	path := testVideo(t, "nasa_13013.mp4")
	want, err := cache.FileSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	v, src, err := OpenVideo(ctx, VideoRef{Path: path}, Options{})
	if err != nil || v.SHA256 != want || v.Info.Frames != 390 {
		t.Fatalf("hashed: %q %d frames %v", v.SHA256, v.Info.Frames, err)
	}
	src.Close()
	given := "given-by-the-caller"
	if v, src, err = OpenVideo(ctx, VideoRef{Path: path, SHA256: given}, Options{}); err != nil || v.SHA256 != given {
		t.Fatalf("known digest: %q %v", v.SHA256, err)
	}
	src.Close()
	if v, src, err = OpenSource(ctx, VideoRef{Path: path}, Options{FramesDetail: true}); err != nil || v.SHA256 != "" || len(v.Info.PTSS) != 390 || len(v.Info.Key) != 390 {
		t.Fatalf("OpenSource: %q, %d pts %v", v.SHA256, len(v.Info.PTSS), err)
	}
	src.Close()

	// The description of one file checked against another at the same path.
	dir := t.TempDir()
	p := filepath.Join(dir, "v.mp4")
	copyFile(t, path, p)
	v, src, err = OpenSource(ctx, VideoRef{Path: p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	src.Close()
	if _, src, err = OpenSource(ctx, VideoRef{Path: p, Info: &v.Info}, Options{}); err != nil {
		t.Fatalf("same file: %v", err)
	}
	src.Close()
	copyFile(t, testVideo(t, "video_90.mov"), p)
	if _, _, err := OpenSource(ctx, VideoRef{Path: p, Info: &v.Info}, Options{}); !errors.Is(err, ErrChanged) {
		t.Errorf("replaced file: %v, want ErrChanged", err)
	}
	if _, _, err := OpenVideo(ctx, VideoRef{Path: dir}, Options{}); err == nil {
		t.Error("a directory was opened")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPlanFrames: a job of exact frames builds the same bytes as a grid config with the same indices,
// geometry and kernel (Plan's job), has no key and is refused by a store; indices past the end fail
// before decoding; hardware decoding is taken here but refused by Plan (no key names it).
func TestPlanFrames(t *testing.T) {
	ctx := context.Background()
	g := testGrid(t, "frames: [4]\npolicies: [uniform]\nresolutions: [\"48x32\"]\n")
	v, src := openTest(t, "nasa_13013.mp4", Options{Kernel: resize.CVLinear})
	jobs, fails, err := PlanJobs(v, g.Configs, Options{Kernel: resize.CVLinear})
	if err != nil || len(fails) > 0 || len(jobs) != 1 {
		t.Fatalf("%v %v %v", jobs, fails, err)
	}
	fj, err := PlanFrames(v, FrameRequest{Indices: jobs[0].Selection.Indices, Geometry: geom.Fixed{W: 48, H: 32}}, Options{Kernel: resize.CVLinear})
	if err != nil {
		t.Fatal(err)
	}
	if fj.Key != "" || fj.Width != 48 || fj.Height != 32 || fj.Spec.Kernel != resize.CVLinear {
		t.Errorf("frames job %+v", fj)
	}
	got := map[string][]byte{}
	sink := &MemorySink{Done: func(o *Object) error { got[o.Result.Job.Config.ID] = o.Data; return nil }}
	if _, jerrs, err := Run(ctx, v, src, []*Job{jobs[0], fj}, sink); err != nil || len(jerrs) > 0 {
		t.Fatal(err, jerrs)
	}
	if len(got["frames"]) == 0 || !bytes.Equal(got["frames"], got[jobs[0].Config.ID]) {
		t.Errorf("PlanFrames built %d bytes, unlike the grid job's %d", len(got["frames"]), len(got[jobs[0].Config.ID]))
	}
	if _, err := (&StoreSink{Store: mustStore(t)}).Begin(fj); err == nil {
		t.Error("a store took a job without a key")
	}
	_, err = PlanFrames(v, FrameRequest{Indices: []int{0, 390}}, Options{})
	var re *decode.RangeError
	if !errors.As(err, &re) || re.Index != 390 {
		t.Errorf("past the end: %v", err)
	}
	if _, err := PlanFrames(v, FrameRequest{Indices: []int{1}}, Options{HWAccel: "cuda"}); err != nil {
		t.Errorf("PlanFrames with hwaccel: %v", err)
	}
	if _, _, err := PlanJobs(v, g.Configs, Options{HWAccel: "cuda"}); !errors.Is(err, ErrOptions) {
		t.Errorf("Plan with hwaccel: %v, want ErrOptions", err)
	}
	if _, _, err := PlanJobs(v, g.Configs, Options{HWAccel: "warp"}); !errors.Is(err, ErrOptions) {
		t.Errorf("Plan with a bad hwaccel: %v, want ErrOptions", err)
	}
}

func mustStore(t *testing.T) *cache.Store {
	t.Helper()
	s, err := cache.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestShardKey: the key sweep and extract shard by is a readable file's content digest, the same for
// two paths to the same bytes; a missing file and a directory are keyed by their path's digest (so
// exactly one shard reports them), with the reason as the error.
func TestShardKey(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.mp4"), filepath.Join(dir, "b.mp4")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("same bytes"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := cache.FileSHA256(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{a, b} {
		if d, k, err := ShardKey(p); err != nil || d != want || k != want {
			t.Errorf("%s: digest %q, key %q, %v; want the content digest %s twice", p, d, k, err, want)
		}
	}
	missing := filepath.Join(dir, "missing.mp4")
	d1, k1, err := ShardKey(missing)
	if d1 != "" || len(k1) != 64 || k1 == want || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: digest %q, key %q, %v", d1, k1, err)
	}
	if _, k2, _ := ShardKey(missing); k2 != k1 {
		t.Errorf("missing file: key %q, then %q", k1, k2)
	}
	if d, k, err := ShardKey(dir); d != "" || len(k) != 64 || k == k1 || err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: digest %q, key %q, %v", d, k, err)
	}
}
