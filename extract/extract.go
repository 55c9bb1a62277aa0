package extract

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/shard"
	"github.com/framesweep/framesweep/pipeline"
)

// Shard is one machine's part of a scaled-out extract: the videos whose content digest falls in
// shard I of N (the same assignment as `framesweep sweep --shard`).
type Shard = shard.Shard

// Options configure Run.
type Options struct {
	pipeline.Options
	Grid  *grid.Grid
	Store *cache.Store
	Jobs  int // videos in parallel (≥ 1)
	// Rehash re-reads and re-hashes every object already in the store before skipping it (by default
	// only its ref, size and header are checked; verify and every read re-hash).
	Rehash bool
	// Shard keeps the videos of one shard (by content digest; the zero value keeps every video).
	// Every video is hashed to decide; the others are counted in Summary.VideosOther and left alone.
	Shard Shard
	// Progress, when set, is called after each video.
	Progress func(path string)
}

// Summary is Run's closing report (`framesweep extract`'s JSON).
type Summary struct {
	Videos          int            `json:"videos"`                        // videos of this shard
	VideosOther     int            `json:"videos_other_shards,omitempty"` // left to the other shards
	Shard           string         `json:"shard,omitempty"`               // i/N
	VideosFailed    int            `json:"videos_failed"`                 // videos that could not be read at all
	Configs         int            `json:"configs"`
	Pairs           int            `json:"pairs"`        // (video, config, pipeline) pairs with frames
	PairsFailed     int            `json:"pairs_failed"` // pairs without an object: see failed_pairs
	Objects         int            `json:"objects"`      // objects this run needed (written + skipped)
	ObjectsWritten  int            `json:"objects_written"`
	ObjectsSkipped  int            `json:"objects_skipped"` // already in the store
	FramesRequested int            `json:"frames_requested"`
	FramesUnion     int            `json:"frames_union"`   // distinct frames the written objects need
	FramesDecoded   int            `json:"frames_decoded"` // decoded and converted to RGB (= union: decoded once)
	CodecFrames     int            `json:"codec_frames"`   // pictures the codec output, needed or not
	PacketsSent     int            `json:"packets_sent"`   // packets sent to the decoders
	PacketsMin      int            `json:"packets_min"`    // the reference-chain floor of the unions (per_video)
	Bytes           int64          `json:"bytes"`          // bytes of objects written
	Seconds         float64        `json:"seconds"`
	Store           string         `json:"store"`
	Manifest        string         `json:"manifest,omitempty"`
	Failed          []FailedVideo  `json:"failed"`
	FailedPairs     []FailedPair   `json:"failed_pairs"`
	PerVideo        []VideoSummary `json:"per_video,omitempty"`
}

// FailedVideo is a video that could not be read.
type FailedVideo struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// FailedPair is a (video, config, pipeline) pair that got no object, and why.
type FailedPair struct {
	Video    string `json:"video"`
	Config   string `json:"config"`
	Pipeline string `json:"pipeline,omitempty"`
	Error    string `json:"error"`
}

// VideoSummary is one video's part.
type VideoSummary struct {
	Path            string `json:"path"`
	SHA256          string `json:"sha256"`
	Written         int    `json:"objects_written"`
	Skipped         int    `json:"objects_skipped"`
	PairsFailed     int    `json:"pairs_failed"`
	FramesRequested int    `json:"frames_requested"`
	FramesUnion     int    `json:"frames_union"`
	FramesDecoded   int    `json:"frames_decoded"`
	CodecFrames     int    `json:"codec_frames"`
	Seeks           int    `json:"seeks"`
	// PacketsSent ÷ PacketsMin: the packets decoded over the minimum any decoder needs for the union
	// (from the keyframe before each wanted frame, following the packets' reference flags).
	PacketsSent   int     `json:"packets_sent"`
	PacketsMin    int     `json:"packets_min"`
	StreamIndex   int     `json:"stream_index"`
	Damaged       []int   `json:"damaged"` // frames the decoder concealed (refused under fail, used under keep)
	Bytes         int64   `json:"bytes"`
	Seconds       float64 `json:"seconds"`
	DecodeSeconds float64 `json:"decode_resize_s"` // the pass: decoding, fan-out and streaming to spools
}

// ManifestLine is one line of manifests/<run>.jsonl: one (video, config, pipeline) outcome.
type ManifestLine struct {
	Status      string     `json:"status"` // written | skipped | failed
	Key         string     `json:"key,omitempty"`
	SHA256      string     `json:"sha256,omitempty"`
	Size        int64      `json:"size,omitempty"`
	Object      string     `json:"object,omitempty"`
	Video       string     `json:"video"`
	VideoSHA256 string     `json:"video_sha256,omitempty"`
	Config      string     `json:"config,omitempty"`
	Loader      string     `json:"loader,omitempty"` // a harness loader read the frames (omitted: framesweep's own reading)
	Pipeline    string     `json:"pipeline,omitempty"`
	Geometry    string     `json:"geometry,omitempty"`
	Kernel      string     `json:"kernel,omitempty"`
	DType       string     `json:"dtype,omitempty"`
	Norm        string     `json:"norm,omitempty"`
	Shape       []int      `json:"shape,omitempty"`
	Indices     []int      `json:"indices,omitempty"`
	PSNR        []*float64 `json:"psnr_db,omitempty"` // cached pipeline: per frame, cached vs raw (null = identical)
	StreamIndex *int       `json:"stream_index,omitempty"`
	Damaged     []int      `json:"damaged,omitempty"` // frames the decoder concealed, used under --on-damaged keep
	Error       string     `json:"error,omitempty"`
}

// Run builds every (video, config, pipeline) object of the grid into the store, decoding each
// video once, up to o.Jobs videos in parallel. Manifest lines are appended (and fsynced) as objects
// are written. A video or pair that fails is reported in the summary and the manifest and the others
// go on; the error is for the store itself, which stops the run.
func Run(ctx context.Context, o Options, videos []string) (*Summary, error) {
	start := time.Now()
	if err := pipeline.CheckConfigs(o.Grid.Configs, o.Options); err != nil {
		return nil, err
	}
	// With --worker, one pool of at most Jobs worker processes decodes every video (not a process per
	// job: each start costs a few tenths of a CPU-second).
	var endWorkers func()
	o.Options, endWorkers = o.Options.WithWorkerPool(max(o.Jobs, 1))
	defer endWorkers()
	run := time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + strconv.Itoa(os.Getpid())
	man, err := o.Store.NewManifest(ctx, run)
	if err != nil {
		return nil, err
	}
	defer man.Close(ctx)
	sum := &Summary{Videos: len(videos), Configs: len(o.Grid.Configs), Store: o.Store.Location(),
		Manifest: man.Where(), Failed: []FailedVideo{}, FailedPairs: []FailedPair{}}
	if o.Shard.N > 1 {
		sum.Shard = o.Shard.String()
	}
	results := make([]*videoRun, len(videos))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(o.Jobs, 1))
	for i, path := range videos {
		g.Go(func() error {
			r := &videoRun{o: &o, man: man, path: path}
			results[i] = r
			err := r.run(gctx)
			if o.Progress != nil {
				o.Progress(path)
			}
			return err // only store failures: they stop every video
		})
	}
	werr := g.Wait()
	for _, r := range results {
		if r == nil {
			continue
		}
		if r.other {
			sum.Videos--
			sum.VideosOther++
			continue
		}
		if r.err != nil {
			sum.VideosFailed++
			sum.Failed = append(sum.Failed, FailedVideo{Path: r.path, Error: pipeline.OneLine(r.err)})
		}
		sum.FailedPairs = append(sum.FailedPairs, r.failed...)
		sum.Pairs += r.pairs
		sum.PairsFailed += len(r.failed)
		s := r.sum
		sum.Objects += s.Written + s.Skipped
		sum.ObjectsWritten += s.Written
		sum.ObjectsSkipped += s.Skipped
		sum.FramesRequested += s.FramesRequested
		sum.FramesUnion += s.FramesUnion
		sum.FramesDecoded += s.FramesDecoded
		sum.CodecFrames += s.CodecFrames
		sum.PacketsSent += s.PacketsSent
		sum.PacketsMin += s.PacketsMin
		sum.Bytes += s.Bytes
		if s.Path != "" {
			sum.PerVideo = append(sum.PerVideo, s)
		}
	}
	if cerr := man.Close(ctx); werr == nil {
		werr = cerr
	}
	sum.Seconds = roundS(time.Since(start))
	return sum, werr
}

func roundS(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

// videoRun is one video of a Run.
type videoRun struct {
	o    *Options
	man  *cache.Manifest
	path string

	mu     sync.Mutex
	sum    VideoSummary
	failed []FailedPair
	pairs  int
	err    error // the video could not be read
	other  bool  // another shard's video: nothing done
}

func (r *videoRun) line(ctx context.Context, l ManifestLine) error {
	if err := r.man.Append(ctx, l); err != nil {
		return &pipeline.SinkError{Err: err}
	}
	return nil
}

func (r *videoRun) fail(ctx context.Context, v pipeline.Video, config, pl string, err error) error {
	r.mu.Lock()
	r.failed = append(r.failed, FailedPair{Video: r.path, Config: config, Pipeline: pl, Error: pipeline.OneLine(err)})
	r.sum.PairsFailed++
	r.mu.Unlock()
	return r.line(ctx, ManifestLine{Status: "failed", Video: r.path, VideoSHA256: v.SHA256, Config: config, Pipeline: pl, Error: pipeline.OneLine(err)})
}

// jobLines are a job's manifest lines, one per config it serves.
func (r *videoRun) jobLines(j *pipeline.Job, v pipeline.Video, status string, ref cache.Ref, shape []int, psnr []*float64, damaged []int) []ManifestLine {
	var out []ManifestLine
	for _, c := range j.Configs {
		out = append(out, ManifestLine{
			Status: status, Key: j.Key, SHA256: ref.Digest, Size: ref.Size, Object: r.o.Store.ObjectPath(ref.Digest),
			Video: r.path, VideoSHA256: v.SHA256, Config: c.ID, Loader: c.Loader, Pipeline: j.Pipeline, Geometry: j.Geometry,
			Kernel: j.Spec.Kernel, DType: string(j.DType), Norm: j.Norm, Shape: shape, Indices: j.Selection.Indices, PSNR: psnr,
			StreamIndex: &j.Spec.Stream, Damaged: damaged,
		})
	}
	return out
}

func (r *videoRun) run(ctx context.Context) error {
	t0 := time.Now()
	o := r.o
	digest := ""
	if o.Shard.N > 1 {
		// The shard key is the content digest (hashed once: the video is opened with it); a video that
		// cannot be read is assigned by its path, so exactly one shard reports it (OpenVideo says why).
		var key string
		digest, key, _ = pipeline.ShardKey(r.path)
		if !o.Shard.Owns(key) {
			r.other = true
			return nil
		}
	}
	v, src, err := pipeline.OpenVideo(ctx, pipeline.VideoRef{Path: r.path, SHA256: digest}, o.Options)
	r.sum = VideoSummary{Path: r.path, SHA256: v.SHA256, StreamIndex: v.Info.StreamIndex, Damaged: []int{}}
	if err != nil {
		r.err = err
		if v.SHA256 == "" {
			r.sum.Path = ""
		}
		return r.line(ctx, ManifestLine{Status: "failed", Video: r.path, VideoSHA256: v.SHA256, Error: pipeline.OneLine(err)})
	}
	defer src.Close()
	jobs, fails, err := pipeline.PlanJobsContext(ctx, v, o.Grid.Configs, o.Options)
	if err != nil {
		return err
	}
	for _, f := range fails {
		r.pairs++
		if err := r.fail(ctx, v, f.Config.ID, f.Pipeline, f.Err); err != nil {
			return err
		}
	}
	build, err := r.missing(ctx, v, jobs)
	if err != nil {
		return err
	}
	return r.pass(ctx, v, src, build, t0)
}

// missing writes the manifest lines of the jobs whose objects the store has (skipped) and returns
// the others, to build; a store that cannot be read stops the run (*pipeline.SinkError).
func (r *videoRun) missing(ctx context.Context, v pipeline.Video, jobs []*pipeline.Job) ([]*pipeline.Job, error) {
	o := r.o
	var build []*pipeline.Job
	for _, j := range jobs {
		r.pairs += len(j.Configs)
		ref, hdr, err := o.Store.Stat(ctx, j.Key)
		if err == nil && o.Rehash {
			_, _, err = o.Store.Has(ctx, j.Key)
		}
		switch {
		case err == nil:
			r.sum.Skipped++
			var psnr []*float64
			var damaged []int
			if p := hdr.Metadata["psnr_db"]; p != "" {
				_ = json.Unmarshal([]byte(p), &psnr)
			}
			_ = json.Unmarshal([]byte(hdr.Metadata["damaged"]), &damaged)
			for _, l := range r.jobLines(j, v, "skipped", ref, hdr.Tensors["frames"].Shape, psnr, damaged) {
				if err := r.line(ctx, l); err != nil {
					return nil, err
				}
			}
		case errors.Is(err, cache.ErrNotFound), errors.Is(err, cache.ErrCorrupt):
			build = append(build, j) // missing or damaged: (re)build it
		default:
			return nil, &pipeline.SinkError{Err: err} // the store cannot be read: stop the run
		}
	}
	return build, nil
}

// pass builds the jobs in one decoding pass into the store, with a manifest line per object written
// and per pair that failed.
func (r *videoRun) pass(ctx context.Context, v pipeline.Video, src pipeline.Source, build []*pipeline.Job, t0 time.Time) error {
	o := r.o
	sink := &pipeline.StoreSink{Ctx: ctx, Store: o.Store, Written: func(res *pipeline.Result, ref cache.Ref) error {
		r.mu.Lock()
		r.sum.Written++
		r.sum.Bytes += ref.Size
		r.mu.Unlock()
		for _, l := range r.jobLines(res.Job, v, "written", ref, res.Job.Shape(), res.PSNR, res.Damaged) {
			if err := r.man.Append(ctx, l); err != nil {
				return err
			}
		}
		return nil
	}}
	st, jerrs, err := pipeline.Run(ctx, v, src, build, sink)
	r.sum.FramesRequested, r.sum.FramesUnion, r.sum.FramesDecoded = st.Requested, st.Union, st.Decoded
	r.sum.CodecFrames, r.sum.Seeks, r.sum.DecodeSeconds = st.CodecFrames, st.Seeks, st.DecodeSeconds
	r.sum.PacketsSent, r.sum.PacketsMin = st.PacketsSent, st.PacketsMin
	r.sum.Damaged = append(r.sum.Damaged, st.Damaged...)
	r.sum.Seconds = roundS(time.Since(t0))
	var se *pipeline.SinkError
	if errors.As(err, &se) {
		return se
	}
	if err == nil {
		if merr := r.man.Flush(ctx); merr != nil {
			return &pipeline.SinkError{Err: merr}
		}
	}
	for _, je := range jerrs {
		for _, c := range je.Job.Configs {
			if lerr := r.fail(ctx, v, c.ID, je.Job.Pipeline, je.Err); lerr != nil {
				return lerr
			}
		}
	}
	if err != nil {
		r.err = err
		return r.line(ctx, ManifestLine{Status: "failed", Video: r.path, VideoSHA256: v.SHA256, Error: pipeline.OneLine(err)})
	}
	return nil
}

// StoreFailed reports whether Run's error is the store's (its output is broken: the run stopped),
// rather than a summary's failed videos.
func StoreFailed(err error) bool {
	var se *pipeline.SinkError
	return errors.As(err, &se)
}
