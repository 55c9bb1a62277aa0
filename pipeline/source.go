package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/worker"
)

// VideoRef names a video to open: its path and, when the caller has hashed the file already, its
// sha256 (so that no video is hashed twice).
type VideoRef struct {
	Path   string
	SHA256 string // hex sha256 of the file's content; "" = hash it
}

// OpenVideo opens ref as o says: in process, or (o.Worker set) through supervised worker processes,
// one for the index scan and one per Read; the file is hashed unless ref carries its digest. The caller
// closes the Source.
func OpenVideo(ctx context.Context, ref VideoRef, o Options) (Video, Source, error) {
	path, digest := ref.Path, ref.SHA256
	st, err := os.Stat(path)
	if err != nil {
		return Video{Path: path}, nil, err
	}
	if !st.Mode().IsRegular() {
		return Video{Path: path}, nil, fmt.Errorf("%s: not a regular file", path)
	}
	if digest == "" {
		if digest, err = cache.FileSHA256(path); err != nil {
			return Video{Path: path}, nil, err
		}
	}
	v := Video{Path: path, SHA256: digest}
	opts := o.decodeOptions()
	if o.Worker == nil {
		d, err := decode.Open(path, opts)
		if err != nil {
			return v, nil, err
		}
		v.Info = d.Info()
		return v, d, nil
	}
	r := &worker.Runner{Limits: *o.Worker}
	info, err := r.Probe(ctx, path, opts, false)
	if err != nil {
		return v, nil, err
	}
	v.Info = info
	return v, WorkerSource(ctx, r, path, opts, info), nil
}

// WorkerSource is a Source that decodes path in a supervised `framesweep worker` child process per
// Read (r's limits), for a video whose Info a worker's probe gave.
func WorkerSource(ctx context.Context, r *worker.Runner, path string, opts decode.Options, info decode.Info) Source {
	return &workerSource{ctx: ctx, r: r, path: path, opts: opts, info: info}
}

// ShardKey is what a video is sharded by: its content digest (returned too), or, for a file that
// cannot be read (digest ""), the sha256 of its path, so exactly one shard reports it. The sweep and
// extract use it alike.
func ShardKey(path string) (digest, key string) {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		if d, err := cache.FileSHA256(path); err == nil {
			return d, d
		}
	}
	sum := sha256.Sum256([]byte(path))
	return "", hex.EncodeToString(sum[:])
}

// workerSource decodes in a child process per Read.
type workerSource struct {
	ctx  context.Context
	r    *worker.Runner
	path string
	opts decode.Options
	info decode.Info
}

func (w *workerSource) Info() decode.Info { return w.info }
func (w *workerSource) Close() error      { return nil }
func (w *workerSource) Read(indices []int, fn func(*decode.Frame) error) (decode.Stats, error) {
	return w.r.Read(w.ctx, w.path, indices, w.opts, fn)
}
