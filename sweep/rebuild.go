package sweep

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/resize/geom"
	"github.com/framesweep/framesweep/runs"
	"github.com/framesweep/framesweep/sampler"
)

// ErrNoInput marks a record whose input cannot be rebuilt: it has none (text-only, or an error before
// its input was built), a harness loader read its frames, or its input is a tensor runtime's float
// tensor (the record names neither its dtype nor its normalisation).
var ErrNoInput = errors.New("no input to rebuild")

// ErrOtherVideo marks a video file whose digest is not the one the record names.
var ErrOtherVideo = errors.New("not the record's video")

// ErrRecordInput marks a record whose input is not one a sweep could have fed: its indices are not its
// frames, or rebuilding it would take more memory than RebuildOptions.MaxBytes.
var ErrRecordInput = errors.New("the record's input cannot be rebuilt as described")

// DefaultRebuildBytes is RebuildOptions.MaxBytes when none is given: 2 GiB.
const DefaultRebuildBytes = 2 << 30

// RebuildOptions are Rebuild's limits and where the videos are.
type RebuildOptions struct {
	// VideoRoot is the directory relative video names are under ("": run.json's video_root).
	VideoRoot string
	// MaxBytes bounds the memory the rebuilt input takes (RebuildBytes); 0: DefaultRebuildBytes. A
	// record over it is refused before a frame is decoded.
	MaxBytes int64
}

// Rebuilt is a record's input built again from what the record and its RUN's run.json say.
type Rebuilt struct {
	Record *record.Full
	Video  string // the file decoded: the record's video under the video root
	Object *pipeline.Object
}

// Match reports whether the rebuilt input is byte for byte the one the record says its model was fed.
func (b *Rebuilt) Match() bool { return b.Object.DataSHA256 == b.Record.InputSHA256 }

// Rebuild builds the input of the RUN's record of (item, config) again, through the engine, from the
// record's own provenance: its video (relative names under videoRoot, else run.json's video_root,
// else as written), the video's sha256, the stream, the frame indices in feeding order, the geometry
// (laid out for that many frames), the resize kernel and the pipeline; rotation and the damaged-frame
// policy are run.json's. Nothing is planned again, so the grid file and its options are not needed.
// Its Object's DataSHA256 is the rebuilt input_sha256 (Match compares it with the record's). The record
// is a file's content, so it is held to what a sweep writes before anything is decoded: as many indices
// as frames, each within sampler.MaxFrames, and a plan whose memory (RebuildBytes) is within
// o.MaxBytes (ErrRecordInput).
func Rebuild(ctx context.Context, rr *runs.Reader, item, config string, o RebuildOptions) (*Rebuilt, error) {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultRebuildBytes
	}
	info, err := rr.Info(ctx)
	if err != nil {
		return nil, err
	}
	rec, err := rr.Find(ctx, item, config)
	if err != nil {
		return nil, err
	}
	if err := canRebuild(rec, info); err != nil {
		return nil, fmt.Errorf("%s: item %q config %q: %w", rr.Location(), item, config, err)
	}
	if err := checkRecordInput(rec.ConfigMeta); err != nil {
		return nil, fmt.Errorf("%s:%d: item %q config %q: %w", rec.Source.Path, rec.Source.Line, item, config, err)
	}
	g, err := geom.Parse(rec.Geometry)
	if err != nil {
		return nil, fmt.Errorf("%s: the record's geometry: %w", rec.Source.Path, err)
	}
	po := pipeline.Options{Kernel: rec.Kernel, NoAutorotate: !info.Inputs.Autorot, Stream: decode.StreamAt(*rec.StreamIndex)}
	if po.OnDamaged, err = decode.ParseDamagePolicy(info.Inputs.OnDamaged); err != nil {
		return nil, fmt.Errorf("%s: run.json on_damaged: %w", rr.Location(), err)
	}
	out := &Rebuilt{Record: rec, Video: recordVideo(rec.Video, o.VideoRoot, info.VideoRoot)}
	v, src, err := pipeline.OpenVideo(ctx, pipeline.VideoRef{Path: out.Video}, po)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if rec.VideoSHA256 != "" && v.SHA256 != rec.VideoSHA256 {
		return nil, fmt.Errorf("%s: %w (sha256 %.12s…, the record's %.12s…): give --video-root the directory the record's %q is under",
			out.Video, ErrOtherVideo, v.SHA256, rec.VideoSHA256, rec.Video)
	}
	j, err := pipeline.PlanFrames(v, pipeline.FrameRequest{Indices: rec.ConfigMeta.Indices, Geometry: g, Pipeline: rec.ConfigMeta.Pipeline}, po)
	if err != nil {
		return nil, err
	}
	if need := RebuildBytes(j, v.Info.Width, v.Info.Height); need > o.MaxBytes {
		return nil, fmt.Errorf("%s:%d: item %q config %q: %w: %d frames × %d image(s) of %dx%d take about %d MiB, over the limit of %d MiB (--max-memory-mb)",
			rec.Source.Path, rec.Source.Line, item, config, ErrRecordInput, j.Frames(), j.Images, j.Width, j.Height, need>>20, o.MaxBytes>>20)
	}
	_, jerrs, err := pipeline.Run(ctx, v, src, []*pipeline.Job{j}, &pipeline.MemorySink{Done: func(ob *pipeline.Object) error { out.Object = ob; return nil }})
	switch {
	case err != nil:
		return nil, err
	case len(jerrs) > 0:
		return nil, jerrs[0].Err
	}
	return out, nil
}

// checkRecordInput holds a record's frames to what a sweep writes: its indices are its frames, and at
// most sampler.MaxFrames of them (before the video is opened).
func checkRecordInput(m *record.ConfigMeta) error {
	switch {
	case m.Frames != nil && *m.Frames != len(m.Indices):
		return fmt.Errorf("%w: config_meta lists %d indices for %d frames", ErrRecordInput, len(m.Indices), *m.Frames)
	case len(m.Indices) > sampler.MaxFrames:
		return fmt.Errorf("%w: %d indices, more than a config may have (%d)", ErrRecordInput, len(m.Indices), sampler.MaxFrames)
	}
	return nil
}

// RebuildBytes estimates the memory of rebuilding j's input from a srcW×srcH video and writing it out:
// the tensor (kept by the pass, then written), a few decoded source frames in flight, and one image
// being encoded as a PNG.
func RebuildBytes(j *pipeline.Job, srcW, srcH int) int64 {
	const inFlight = 8 // decoded frames the pass and the resizers hold at once, generously
	return j.TensorBytes() + inFlight*4*int64(srcW)*int64(srcH) + 8*int64(j.Width)*int64(j.Height)
}

// canRebuild says why a record's input cannot be rebuilt (nil when it can).
func canRebuild(rec *record.Full, info *runs.Info) error {
	m := rec.ConfigMeta
	switch {
	case rec.InputSHA256 == "" || m == nil || len(m.Indices) == 0 || rec.StreamIndex == nil:
		return fmt.Errorf("%w: the record has no input_sha256, indices or stream (a text-only config, or an error before its input was built)", ErrNoInput)
	case m.Loader != "":
		return fmt.Errorf("%w: the %s loader's reader made its frames (positions in its own numbering); `framesweep frames VIDEO --loader %s` reads them", ErrNoInput, m.Loader, m.Loader)
	case info.Runtime.Engine == "onnx":
		return fmt.Errorf("%w: its input_sha256 is the onnx runtime's float tensor, which the record does not describe (dtype, normalisation, layout)", ErrNoInput)
	}
	return nil
}

// recordVideo is the file a record's video names: an absolute name as it is, a relative one under
// the given root, else run.json's root, else as written (records of a RUN begun before roots).
func recordVideo(video, given, runRoot string) string {
	switch {
	case filepath.IsAbs(video):
		return video
	case given != "":
		return filepath.Join(given, filepath.FromSlash(video))
	case runRoot != "":
		return filepath.Join(runRoot, filepath.FromSlash(video))
	}
	return video
}
