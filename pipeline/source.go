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

// OpenVideo hashes and opens path as o says: in process, or (o.Worker set) through supervised worker
// processes, one for the index scan and one per Read. The caller closes the Source.
func OpenVideo(ctx context.Context, path string, o Options) (Video, Source, error) {
	return openVideo(ctx, path, "", o)
}

// openVideo is OpenVideo with the file's sha256 when the caller has it already ("" = hash it).
func openVideo(ctx context.Context, path, digest string, o Options) (Video, Source, error) {
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
