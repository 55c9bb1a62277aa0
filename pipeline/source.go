package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/engine/worker"
	"github.com/framesweep/framesweep/loader/load"
)

// The source layer: the one way a video is opened for frames. Every caller — extract, the sweep,
// serve, ask, frames, probe, plan and the benchmarks — goes through OpenVideo (inputs that are keyed
// by the file's digest) or OpenSource (frames or a description without a key), and both go through
// openDecoder, the one place a VideoRef becomes a decoder, in this process or in supervised worker
// processes; a harness loader's reader gets its decoder from openLocal, openDecoder's in-process half,
// as a LocalSource. No other package calls decode.Open, and none reaches a decoder by a type assertion
// (TestOneSourceLayer checks both over `go list`).

// VideoRef names a video to open and carries what the caller already knows of it, so that nothing is
// done twice.
type VideoRef struct {
	// Path is the local file. It is what is decoded and what objects record as source_path.
	Path string
	// SHA256 is the file's content digest (hex) when the caller has hashed it already; "" makes
	// OpenVideo hash the file.
	SHA256 string
	// Info is the decoder's description of this same file version from an earlier open (a server's
	// cache of descriptions). A worker Source then takes it instead of probing again; an open in
	// this process checks the file still gives it, else ErrChanged.
	Info *decode.Info
	// File, when set, is the video already opened (serve opens it beneath its root and checks it): it
	// is hashed and decoded through this descriptor only — in this process as /proc/self/fd/N, in a
	// worker as the descriptor it inherits — never by Path, which then only names it (Video.Path,
	// Info.Path, errors, an object's source_path). The Source holds its own duplicate of it, so the
	// caller may close File once OpenVideo or OpenSource has returned.
	File *os.File
}

// ErrChanged: the video no longer matches the description the caller gave (VideoRef.Info): it was
// rewritten or replaced since it was described.
var ErrChanged = errors.New("the video changed since it was described")

// OpenVideo opens ref for building inputs as o says: in process, or (o.Worker set) through supervised
// worker processes: a job for the index scan and one per Read, each in a process of its own, or in
// o's pool of processes (WithWorkerPool). The file is hashed unless ref carries its
// digest: Video.SHA256 is the content digest every cache key names. The caller closes the Source.
func OpenVideo(ctx context.Context, ref VideoRef, o Options) (Video, Source, error) {
	v := Video{Path: ref.Path, SHA256: ref.SHA256}
	if err := ref.checkRegular(); err != nil {
		return v, nil, err
	}
	var hashed chan hashResult
	if v.SHA256 == "" {
		// Hash while the decoder scans the file: both read all of it, and on separate cores the open
		// then takes the longer of the two instead of their sum (the same work, less wall time).
		hashed = make(chan hashResult, 1)
		go func() {
			sum, err := ref.sha256()
			hashed <- hashResult{sum, err}
		}()
	}
	src, err := openDecoder(ctx, ref, o)
	if hashed != nil {
		h := <-hashed
		if h.err != nil {
			if src != nil {
				src.Close()
			}
			return v, nil, h.err
		}
		v.SHA256 = h.sum
	}
	if err != nil {
		return v, nil, err
	}
	v.Info = src.Info()
	return v, src, nil
}

type hashResult struct {
	sum string
	err error
}

// OpenSource opens ref as OpenVideo does but never hashes it: for frames or a description that no
// cache key names (probe, plan, frames, the benchmarks). Video.SHA256 is ref.SHA256 (maybe "").
func OpenSource(ctx context.Context, ref VideoRef, o Options) (Video, Source, error) {
	v := Video{Path: ref.Path, SHA256: ref.SHA256}
	if err := ref.checkRegular(); err != nil {
		return v, nil, err
	}
	src, err := openDecoder(ctx, ref, o)
	if err != nil {
		return v, nil, err
	}
	v.Info = src.Info()
	return v, src, nil
}

// OpenLocal opens ref as OpenSource does, in this process (o.Worker is ErrOptions): a LocalSource, for
// what only an in-process decoder answers (plan's decode cost). The caller closes it.
func OpenLocal(ctx context.Context, ref VideoRef, o Options) (Video, LocalSource, error) {
	v := Video{Path: ref.Path, SHA256: ref.SHA256}
	if o.Worker != nil {
		return v, nil, fmt.Errorf("%s: %w: a LocalSource decodes in this process, not in a worker", ref.Path, ErrOptions)
	}
	if err := ref.checkRegular(); err != nil {
		return v, nil, err
	}
	src, err := openLocal(ref, o.decodeOptions(), o.FramesDetail)
	if err != nil {
		return v, nil, err
	}
	v.Info = src.Info()
	return v, src, nil
}

// checkRegular refuses anything but a regular file (a FIFO would block the hash, a device never end).
func (ref VideoRef) checkRegular() error {
	var st os.FileInfo
	var err error
	if ref.File != nil {
		st, err = ref.File.Stat()
	} else {
		st, err = os.Stat(ref.Path)
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", ref.Path)
	}
	return nil
}

// openDecoder is the one place a ref becomes a decoder. In process it opens decode.Video (index scan:
// openLocal) and, when ref carries a description, checks the file still matches it. With o.Worker, the
// index scan runs in a worker (skipped when ref carries the description) and each Read in another. A
// ref with a File is opened through that descriptor only (openFile, openWorkerFile).
func openDecoder(ctx context.Context, ref VideoRef, o Options) (Source, error) {
	opts := o.decodeOptions()
	if ref.File != nil && o.Worker != nil {
		return openWorkerFile(ctx, ref, o)
	}
	if o.Worker != nil {
		r := o.runner()
		if ref.Info != nil {
			return &workerSource{ctx: ctx, r: r, path: ref.Path, opts: opts, info: *ref.Info}, nil
		}
		info, err := r.Probe(ctx, ref.Path, opts, o.FramesDetail)
		if err != nil {
			return nil, err
		}
		return &workerSource{ctx: ctx, r: r, path: ref.Path, opts: opts, info: info}, nil
	}
	return openLocal(ref, opts, o.FramesDetail)
}

// LocalSource is a Source decoded in this process, with what a harness loader's reader reads of the
// video besides frames by index (loader/load.Reader: the stream header, the index, every packet in
// file order through Sequential), and what a Read would decode (ReadCost: the decoder's own plan,
// which plan prints). OpenLocal and openLocal open one; RunLoader hands it to load.Run, so a loader
// reads the video through the source layer, never through a decoder it reached some other way.
type LocalSource interface {
	Source
	Header() decode.StreamHeader
	Index() decode.Index
	NumFrames() int
	Packets() int
	Sequential(o decode.SeqOptions, fn func(*decode.SeqFrame) (stop bool, err error)) (decode.SeqStats, error)
	ReadCost(indices []int) (decode.ReadCost, error)
}

// A LocalSource is what a loader reads.
var _ load.Reader = LocalSource(nil)

// openLocal is the in-process half of openDecoder: decode.Video (index scan) with opts, by the ref's
// descriptor when it has one (openFile), checked against the ref's description when it carries one;
// detail makes Info carry every frame's pts and key flag.
func openLocal(ref VideoRef, opts decode.Options, detail bool) (LocalSource, error) {
	if ref.File != nil {
		return openFile(ref, opts, detail)
	}
	d, err := decode.Open(ref.Path, opts)
	if err != nil {
		return nil, err
	}
	var src LocalSource = d
	if detail {
		src = &detailed{Video: d}
	}
	if ref.Info != nil && !sameVideo(src.Info(), *ref.Info) {
		src.Close()
		return nil, fmt.Errorf("%s: %w", ref.Path, ErrChanged)
	}
	return src, nil
}

// sameVideo reports whether two descriptions are of the same decodable stream: what a pass relies on
// (the frame count, the stream and the size of its frames).
func sameVideo(a, b decode.Info) bool {
	return a.Frames == b.Frames && a.StreamIndex == b.StreamIndex && a.OutWidth == b.OutWidth && a.OutHeight == b.OutHeight &&
		a.Codec == b.Codec && a.PixFmt == b.PixFmt
}

// detailed is an in-process Source whose Info carries every frame's pts and key flag.
type detailed struct{ *decode.Video }

func (d *detailed) Info() decode.Info { return d.WithFramesDetail() }

// ShardKey is what a video is sharded by (internal/shard assigns the key to a shard): its content
// digest (returned too), or, for a file that cannot be read (digest "", err saying why: missing, not a
// regular file, unreadable), the sha256 of its path, so exactly one shard reports it. `framesweep
// sweep` and `framesweep extract` both call it, so every video lands on the same machine in both.
func ShardKey(path string) (digest, key string, err error) {
	st, err := os.Stat(path)
	switch {
	case err != nil:
	case !st.Mode().IsRegular():
		err = fmt.Errorf("%s: not a regular file", path)
	default:
		if digest, err = cache.FileSHA256(path); err == nil {
			return digest, digest, nil
		}
	}
	sum := sha256.Sum256([]byte(path))
	return "", hex.EncodeToString(sum[:]), err
}

// workerSource decodes in a supervised worker job per Read: the file at path, or, with file set,
// the file that descriptor holds (the worker gets a copy of it; path only names it).
type workerSource struct {
	ctx  context.Context
	r    *worker.Runner
	path string
	file *os.File // owned: closed by Close
	opts decode.Options
	info decode.Info
}

func (w *workerSource) Info() decode.Info { return w.info }

// Close closes the descriptor the Source owns, if any (idempotent).
func (w *workerSource) Close() error {
	if w.file != nil {
		w.file.Close()
		w.file = nil
	}
	return nil
}

func (w *workerSource) Read(indices []int, fn func(*decode.Frame) error) (decode.Stats, error) {
	if w.file != nil {
		return w.r.ReadFile(w.ctx, w.file, w.path, indices, w.opts, fn)
	}
	return w.r.Read(w.ctx, w.path, indices, w.opts, fn)
}
