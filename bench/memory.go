package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/framesweep/framesweep/internal/engine/worker"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/resize"
	"github.com/framesweep/framesweep/resize/geom"
)

// MemoryConfig configures the memory benchmark. Zero values take the defaults noted.
type MemoryConfig struct {
	Video    string    // "" = the generated 60 s 1080p30 H.264 GOP 250 clip
	Frames   int       // frames served (default 256, placed by the nested ladder)
	Width    int       // output width (default 448)
	Height   int       // output height (default 448)
	Kernel   string    // resize kernel (default resize.DefaultKernel)
	Threads  int       // decoder threads (0: FFmpeg's default)
	CacheDir string    // where the default clip is generated
	Log      io.Writer // progress lines; nil = quiet
	// Worker decodes in supervised `framesweep worker` processes (this binary re-executed, as the sweep
	// runs untrusted videos); this process then resizes and holds the outputs.
	Worker bool
}

// MemoryBudget is the allowance above the output bytes for peak RSS.
const MemoryBudget = 150 << 20

// Memory serves Frames frames of the video resized to Width×Height through the engine (its source
// layer, pipeline.PlanFrames and a MemorySink), holding every output (as a consumer building a batch
// would), and reports the process's peak RSS (getrusage ru_maxrss, what
// `/usr/bin/time -v` prints as "Maximum resident set size") against the output bytes + 150 MiB.
// The peak is the process's, so run it as its own process (`framesweep bench memory`); a clip generated
// by this run is made by a child ffmpeg, which ru_maxrss of this process does not include.
func Memory(ctx context.Context, cfg MemoryConfig) ([]Row, error) {
	if cfg.Frames <= 0 {
		cfg.Frames = 256
	}
	if cfg.Width <= 0 {
		cfg.Width = 448
	}
	if cfg.Height <= 0 {
		cfg.Height = 448
	}
	if cfg.Kernel == "" {
		cfg.Kernel = resize.DefaultKernel
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = CacheDir()
	}
	path := cfg.Video
	if path == "" {
		var err error
		if path, err = EnsureClip(ctx, cfg.CacheDir, BenchClip(250)); err != nil {
			return nil, err
		}
	}
	startRSS := maxRSS()
	// Anonymous memory before any work: the Go runtime and the static initialisers of the linked C/C++
	// libraries, not this pipeline.
	startAnon, _ := readAnonFile()
	// Sample the anonymous/file-backed split, so the report says how much of the peak is this pipeline's
	// own memory and how much is shared-library pages mapped by the binary.
	samp := newRSSSampler(10 * time.Millisecond)
	defer samp.stop()
	start := time.Now()
	var workerPeak int64
	o := pipeline.Options{Kernel: cfg.Kernel, Threads: cfg.Threads}
	if cfg.Worker {
		// The index scan runs in a worker too, so this process never opens the video.
		o.Worker = &worker.Limits{}
		o.WorkerUsage = func(u worker.Usage) { workerPeak = max(workerPeak, u.PeakRSS) }
	}
	out, err := memoryServe(ctx, path, cfg.Frames, geom.Fixed{W: cfg.Width, H: cfg.Height}, o)
	if err != nil {
		return nil, err
	}
	el := time.Since(start).Seconds()
	peakAnon, peakFile := samp.stop()
	peak := maxRSS()
	outBytes := int64(len(out.Data))
	within := 0.0
	if peak <= outBytes+MemoryBudget {
		within = 1
	}
	const mib = 1 << 20
	where := "in-process"
	if cfg.Worker {
		where = "worker"
	}
	row := Row{
		Name: fmt.Sprintf("Memory/video=%s/frames=%d/size=%dx%d/kernel=%s/decode=%s", filepath.Base(path), out.Result.Job.Frames(), cfg.Width,
			cfg.Height, cfg.Kernel, where),
		Mode: "memory", Iterations: 1, Seconds: el, Env: CurrentEnv(),
		Metrics: []Metric{
			{"peak-rss-MiB", float64(peak) / mib},
			{"output-MiB", float64(outBytes) / mib},
			{"overhead-MiB", float64(peak-outBytes) / mib},
			{"budget-MiB", float64(outBytes+MemoryBudget) / mib},
			{"within-budget", within},
			{"rss-before-MiB", float64(startRSS) / mib},
			{"peak-anon-MiB", float64(peakAnon) / mib},
			{"anon-overhead-MiB", float64(peakAnon-outBytes) / mib},
			{"anon-before-MiB", float64(startAnon) / mib},
			{"pipeline-overhead-MiB", float64(peakAnon-startAnon-outBytes) / mib},
			{"peak-file-MiB", float64(peakFile) / mib},
		},
	}
	if cfg.Worker {
		// /usr/bin/time -v reports the larger of the two processes; the machine holds their sum.
		row.Metrics = append(row.Metrics, Metric{"worker-peak-rss-MiB", float64(workerPeak) / mib},
			Metric{"sum-peak-rss-MiB", float64(peak+workerPeak) / mib})
		row.Note = "peak-rss is this process (resizing and holding the outputs); the worker decoded"
	}
	return []Row{row}, nil
}

// memoryServe opens path (o says where it decodes), serves up to frames frames placed by the nested
// ladder at geometry g through the engine, and returns the object holding them all.
func memoryServe(ctx context.Context, path string, frames int, g geom.Geometry, o pipeline.Options) (*pipeline.Object, error) {
	v, src, err := pipeline.OpenSource(ctx, pipeline.VideoRef{Path: path}, o)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	idx, err := BudgetIndices(LadderNested, v.Info.Frames, min(frames, v.Info.Frames))
	if err != nil {
		return nil, err
	}
	job, err := pipeline.PlanFrames(v, pipeline.FrameRequest{Indices: idx, Geometry: g}, o)
	if err != nil {
		return nil, err
	}
	var out *pipeline.Object
	_, jerrs, err := pipeline.Run(ctx, v, src, []*pipeline.Job{job}, &pipeline.MemorySink{Done: func(ob *pipeline.Object) error { out = ob; return nil }})
	switch {
	case err != nil:
		return nil, err
	case len(jerrs) > 0:
		return nil, jerrs[0].Err
	case out == nil:
		return nil, fmt.Errorf("%s: the pass served nothing", path)
	}
	return out, src.Close()
}

// maxRSS is this process's peak resident set size in bytes.
func maxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss << 10 // KiB on Linux
}

// rssSampler polls /proc/self/status for the peak RssAnon and RssFile (ru_maxrss only has their sum).
type rssSampler struct {
	done           chan struct{}
	wg             sync.WaitGroup
	once           sync.Once
	maxAnon, maxFl int64
}

func newRSSSampler(every time.Duration) *rssSampler {
	s := &rssSampler{done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			a, f := readAnonFile()
			s.maxAnon, s.maxFl = max(s.maxAnon, a), max(s.maxFl, f)
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop ends sampling (idempotent) and returns the peaks in bytes.
func (s *rssSampler) stop() (anon, file int64) {
	s.once.Do(func() { close(s.done) })
	s.wg.Wait()
	return s.maxAnon, s.maxFl
}

func readAnonFile() (anon, file int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "RssAnon":
			anon = n << 10
		case "RssFile":
			file = n << 10
		}
	}
	return anon, file
}
