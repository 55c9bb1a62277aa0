package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/resize"
)

func testVideo(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("..", "testdata", "videos", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func testGrid(t testing.TB, text string) *grid.Grid {
	t.Helper()
	g, err := grid.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func openTest(t testing.TB, name string, o Options) (Video, Source) {
	t.Helper()
	v, src, err := OpenVideo(context.Background(), VideoRef{Path: testVideo(t, name)}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return v, src
}

// TestPlanPairFailures: on the 3-frame clip, 8 frames cannot be planned; that pair fails with a
// reason naming the video and the config, while the video's other configs get jobs. Text-only
// configs need no job; configs with the same bytes share one.
func TestPlanPairFailures(t *testing.T) {
	g := testGrid(t, "frames: [2, 8]\npolicies: [uniform]\nresolutions: [\"32x32\"]\npipelines: [raw, cached]\ntext_only: true\n")
	v, _ := openTest(t, "video_90.mov", Options{})
	configs := append(slices.Clone(g.Configs), g.Configs[0])
	configs[len(configs)-1].ID = "twin"
	jobs, fails, err := PlanJobs(v, configs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2 (f2 raw, f2 cached)", len(jobs))
	}
	var twins int
	for _, j := range jobs {
		if len(j.Configs) == 2 && j.Configs[1].ID == "twin" {
			twins++
		}
	}
	if twins != 1 {
		t.Errorf("the twin config does not share its job: %+v", jobs)
	}
	if len(fails) != 2 {
		t.Fatalf("%d failures, want 2 (f8 raw and cached): %v", len(fails), fails)
	}
	for _, f := range fails {
		if f.Config.Frames != 8 || !strings.Contains(f.Error(), v.Path) || !strings.Contains(f.Error(), f.Config.ID) {
			t.Errorf("failure %v", f)
		}
	}
	if _, _, err := PlanJobs(v, configs, Options{Kernel: "nope"}); !errors.Is(err, ErrOptions) {
		t.Errorf("unknown kernel: %v", err)
	}
	if _, _, err := PlanJobs(v, configs, Options{DType: cache.F32, Norm: "nope"}); !errors.Is(err, ErrOptions) {
		t.Errorf("unknown norm: %v", err)
	}
}

// TestSinksAgree: the store sink's object and the memory sink's object are the same bytes; read
// back, they give the frames the model sees; DataSHA256 is the digest of that tensor.
func TestSinksAgree(t *testing.T) {
	ctx := context.Background()
	g := testGrid(t, "frames: [3, 6]\npolicies: [uniform]\nresolutions: [\"40x24\", \"internvl3:max_num=4,tile=16\"]\npipelines: [raw, cached]\n")
	for _, dt := range []cache.DType{cache.U8, cache.F16} {
		o := Options{DType: dt}
		v, src := openTest(t, "bear-vp9-odd-dimensions.webm", o)
		jobs, fails, err := PlanJobs(v, g.Configs, o)
		if err != nil || len(fails) > 0 || len(jobs) != 8 {
			t.Fatalf("%d jobs %v %v", len(jobs), fails, err)
		}
		store, _ := cache.Open(ctx, t.TempDir())
		var mu sync.Mutex
		mem := map[string]*Object{}
		sink := multiSink{&StoreSink{Ctx: ctx, Store: store}, &MemorySink{Done: func(o *Object) error {
			mu.Lock()
			defer mu.Unlock()
			mem[o.Result.Job.Key] = o
			return nil
		}}}
		st, jerrs, err := Run(ctx, v, src, jobs, sink)
		if err != nil || len(jerrs) > 0 || st.Completed != 8 || st.Decoded != st.Union {
			t.Fatalf("%+v %v %v", st, jerrs, err)
		}
		for _, j := range jobs {
			b, _, err := store.Get(ctx, j.Key)
			if err != nil {
				t.Fatal(err)
			}
			o := mem[j.Key]
			if !bytes.Equal(b, o.Bytes()) {
				t.Fatalf("%s: store and memory objects differ", j.Config.ID)
			}
			in, err := o.Input()
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(in.Tensor.Data)
			if hex.EncodeToString(sum[:]) != o.DataSHA256 || !slices.Equal(in.Indices, j.Selection.Indices) || in.Images != j.Images {
				t.Fatalf("%s: input %+v", j.Config.ID, in)
			}
			if dt == cache.U8 && len(in.Frames) != j.Frames()*j.Images {
				t.Fatalf("%d frames for %d×%d", len(in.Frames), j.Frames(), j.Images)
			}
			if dt != cache.U8 && in.Frames != nil {
				t.Fatal("float input exposes uint8 frames")
			}
		}
	}
}

// multiSink fans a pass out to several sinks (a test helper: one pass, two outputs).
type multiSink []Sink

func (m multiSink) Begin(j *Job) (JobWriter, error) {
	var ws multiWriter
	for _, s := range m {
		w, err := s.Begin(j)
		if err != nil {
			ws.Abort(err)
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

type multiWriter []JobWriter

func (m multiWriter) Frame(pos int, d []byte) error {
	for _, w := range m {
		if err := w.Frame(pos, d); err != nil {
			return err
		}
	}
	return nil
}
func (m multiWriter) Done(r *Result) error {
	for _, w := range m {
		if err := w.Done(r); err != nil {
			return err
		}
	}
	return nil
}
func (m multiWriter) Abort(err error) {
	for _, w := range m {
		w.Abort(err)
	}
}

// TestPlanOrder: frames reach a job in plan order even when the plan is not sorted (frames are
// decoded in index order and served by several goroutines), duplicates included; the tensor equals
// an independent decode → resize in plan order.
func TestPlanOrder(t *testing.T) {
	ctx := context.Background()
	g := testGrid(t, "frames: [12]\npolicies: [uniform]\nresolutions: [\"24x16\"]\n")
	v, src := openTest(t, "nasa_13013.mp4", Options{})
	jobs, _, err := PlanJobs(v, g.Configs, Options{})
	if err != nil || len(jobs) != 1 {
		t.Fatal(jobs, err)
	}
	j := jobs[0]
	idx := slices.Clone(j.Selection.Indices)
	slices.Reverse(idx)
	idx = append(idx, idx[3], idx[0]) // duplicates, out of order
	j.Selection.Indices = idx
	var got *Object
	if _, jerrs, err := Run(ctx, v, src, jobs, &MemorySink{Done: func(o *Object) error { got = o; return nil }}); err != nil || len(jerrs) > 0 {
		t.Fatal(jerrs, err)
	}
	d, err := decode.Open(v.Path, decode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	frames := map[int][]byte{}
	if _, err := d.Read(idx, func(f *decode.Frame) error {
		r, err := resize.Resize(resize.DefaultKernel, &f.Image, 24, 16)
		frames[f.Index] = r.Packed()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, x := range idx {
		want = append(want, frames[x]...)
	}
	if !bytes.Equal(got.Data, want) {
		t.Fatal("tensor is not in plan order")
	}
	if got.Result.PTS[0] <= got.Result.PTS[1] {
		t.Errorf("pts not in plan order: %v", got.Result.PTS)
	}
}

// failingSink fails the n-th Frame call of any job.
type failingSink struct {
	n      int
	mu     sync.Mutex
	calls  int
	aborts int
}

func (f *failingSink) Begin(*Job) (JobWriter, error) { return f, nil }
func (f *failingSink) Frame(int, []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.calls == f.n {
		return errors.New("disk full")
	}
	return nil
}
func (f *failingSink) Done(*Result) error { return nil }
func (f *failingSink) Abort(error) {
	f.mu.Lock()
	f.aborts++
	f.mu.Unlock()
}

// TestSinkErrorStopsPass: a writer error stops the pass (a *SinkError), every unfinished job is
// aborted, and the store's spools are gone.
func TestSinkErrorStopsPass(t *testing.T) {
	ctx := context.Background()
	g := testGrid(t, "frames: [16, 32]\npolicies: [uniform]\nresolutions: [\"16x16\", \"32x32\"]\n")
	v, src := openTest(t, "nasa_13013.mp4", Options{})
	jobs, _, _ := PlanJobs(v, g.Configs, Options{})
	fs := &failingSink{n: 5}
	st, _, err := Run(ctx, v, src, jobs, fs)
	var se *SinkError
	if !errors.As(err, &se) || fs.aborts != len(jobs) || st.Completed != 0 {
		t.Fatalf("err %v, %d aborts of %d jobs, %+v", err, fs.aborts, len(jobs), st)
	}
	// A cancelled context aborts the store sink's spools.
	dir := t.TempDir()
	store, _ := cache.Open(ctx, dir)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	v2, src2 := openTest(t, "nasa_13013.mp4", Options{})
	if _, _, err := Run(cctx, v2, src2, jobs, &StoreSink{Ctx: cctx, Store: store}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "cas", ".tmp-*"))
	if len(left) != 0 {
		t.Fatalf("spools left: %v", left)
	}
}

// TestDamagedFrames: decord's corrupted.mp4 has a frame the decoder conceals (frame 32). Under the
// default policy the jobs that need it fail, naming the frame, and the others complete; under keep
// the job completes and its object records the frame as damaged.
func TestDamagedFrames(t *testing.T) {
	path := testenv.SharedVideo(t, "decord/corrupted.mp4")
	ctx := context.Background()
	configs := []grid.Config{}
	for _, text := range []string{"frames: [2]\npolicies: [uniform]\nresolutions: [\"16x16\"]\n"} {
		configs = append(configs, testGrid(t, text).Configs...)
	}
	for _, policy := range []decode.DamagePolicy{decode.DamagedFail, decode.DamagedKeep} {
		o := Options{OnDamaged: policy}
		v, src, err := OpenVideo(ctx, VideoRef{Path: path}, o)
		if err != nil {
			t.Fatal(err)
		}
		jobs, _, err := PlanJobs(v, configs, o)
		if err != nil {
			t.Fatal(err)
		}
		// One job on the damaged frame, one beside it.
		bad, good := jobs[0], *jobs[0]
		bad.Selection.Indices = []int{31, 32}
		good.Selection.Indices = []int{33, 34} // frame 30 does not decode at all
		var got []*Object
		var mu sync.Mutex
		_, jerrs, err := Run(ctx, v, src, []*Job{bad, &good}, &MemorySink{Done: func(o *Object) error {
			mu.Lock()
			got = append(got, o)
			mu.Unlock()
			return nil
		}})
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
		switch policy {
		case decode.DamagedFail:
			if len(got) != 1 || len(jerrs) != 1 || jerrs[0].Job != bad || !errors.Is(jerrs[0].Err, decode.ErrDamaged) || !strings.Contains(jerrs[0].Err.Error(), "[32]") {
				t.Fatalf("fail: %d objects, job errors %v", len(got), jerrs)
			}
		case decode.DamagedKeep:
			if len(got) != 2 || len(jerrs) != 0 {
				t.Fatalf("keep: %d objects, %v", len(got), jerrs)
			}
			for _, o := range got {
				want := "[]"
				if o.Result.Job == bad {
					want = "[32]"
				}
				if m := ObjectMetadata(o.Result)["damaged"]; m != want {
					t.Errorf("%v: damaged %s, want %s", o.Result.Job.Selection.Indices, m, want)
				}
			}
		}
	}
}
