package bench

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/framesweep/framesweep/decode"
)

// TestGridSmall runs the grid machinery on a small generated clip: every variant runs, the decode-once
// pass serves exactly the union, and per-budget decoding does at least as much decoding work.
func TestGridSmall(t *testing.T) {
	t.Parallel()
	cfg := GridConfig{
		GOPs:     []int{25},
		Budgets:  []int{4, 8, 16},
		CacheDir: t.TempDir(),
		Clip: func(gop int) Clip {
			return Clip{Seconds: 4, Width: 160, Height: 96, FPS: 25, GOP: gop, Codec: "h264", Bits: 8}
		},
	}
	rows, err := Grid(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	_, union, _ := Union(LadderLinspace, 100, cfg.Budgets)
	byName := map[string]Row{}
	for _, r := range rows {
		byName[r.Name] = r
		if r.Seconds <= 0 || r.Env.Commit == "" || r.Env.FFmpeg == "" {
			t.Errorf("row %s: seconds %v, env %+v", r.Name, r.Seconds, r.Env)
		}
	}
	once := byName["Grid/gop=25/ladder=linspace/variant=once/threads=1"]
	if v, _ := once.Metric("served-frames"); int(v) != len(union) {
		t.Errorf("served %v frames, want the union's %d", v, len(union))
	}
	dOnce, _ := once.Metric("decoded-frames")
	per := byName["Grid/gop=25/ladder=linspace/variant=per-budget/threads=1"]
	if dPer, _ := per.Metric("decoded-frames"); dPer < dOnce {
		t.Errorf("per-budget decoded %v frames < decode-once %v", dPer, dOnce)
	}
	sum := byName["Grid/gop=25/ladder=linspace"]
	if u, _ := sum.Metric("union"); int(u) != len(union) {
		t.Errorf("summary union %v", u)
	}
	for _, f := range Formats {
		if err := Write(os.Stderr, f, rows[:1]); err != nil {
			t.Errorf("format %s: %v", f, err)
		}
	}
}

// BenchmarkGrid is the benchmark: 60 s of 1080p30 H.264 at GOP 250 and 60, the union of the
// {16,32,64,128,256} round(linspace) budgets. Ratios are reported as metrics (see Grid).
func BenchmarkGrid(b *testing.B) {
	for _, gop := range []int{250, 60} {
		b.Run("gop="+strconv.Itoa(gop)+"/ladder="+LadderLinspace, func(b *testing.B) {
			var rows []Row
			for b.Loop() {
				var err error
				if rows, err = Grid(context.Background(), GridConfig{GOPs: []int{gop}}); err != nil {
					b.Fatal(err)
				}
			}
			for _, m := range rows[len(rows)-1].Metrics {
				b.ReportMetric(m.Value, m.Name)
			}
		})
	}
}

// TestHWUsed: a device that was opened but declined by the decoder (Read's HWFallback) is a CPU decode,
// so bench/gpu/run.sh's hw-used check cannot pass on CPU frames.
func TestHWUsed(t *testing.T) {
	for _, c := range []struct {
		st   decode.Stats
		want bool
	}{
		{decode.Stats{HWAccel: "cuda"}, true},
		{decode.Stats{HWAccel: "cuda", HWFallback: "cuda: the decoder offered no cuda format for this stream; decoded on the CPU"}, false},
		{decode.Stats{HWAccel: "none", HWFallback: "cuda: Hopper GPUs (H100/H200) have no AV1 hardware decoder"}, false},
		{decode.Stats{HWAccel: "none"}, false},
		{decode.Stats{}, false},
	} {
		if got := hwUsed(c.st); got != c.want {
			t.Errorf("hwUsed(%+v) = %v, want %v", c.st, got, c.want)
		}
	}
}

// TestEnsureClipConcurrent: processes (here goroutines) generating the same clip at once each get a
// complete clip, and no temporary file is left behind.
func TestEnsureClipConcurrent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := Clip{Seconds: 1, Width: 64, Height: 48, FPS: 10, GOP: 5, Codec: "h264", Bits: 8}
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := EnsureClip(context.Background(), dir, c)
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != c.name() {
		t.Fatalf("cache holds %v, want only %s", ents, c.name())
	}
	v, err := decode.Open(filepath.Join(dir, c.name()), decode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.NumFrames() != c.Frames() {
		t.Fatalf("clip has %d frames, want %d", v.NumFrames(), c.Frames())
	}
}
