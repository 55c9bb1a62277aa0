package pipeline

import (
	"context"
	"fmt"
	"os"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/worker"
)

// OpenVideo hashes and opens path as o says: in process, or (o.Worker set) through supervised worker
// processes, one for the index scan and one per Read. The caller closes the Source.
func OpenVideo(ctx context.Context, path string, o Options) (Video, Source, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Video{Path: path}, nil, err
	}
	if !st.Mode().IsRegular() {
		return Video{Path: path}, nil, fmt.Errorf("%s: not a regular file", path)
	}
	digest, err := cache.FileSHA256(path)
	if err != nil {
		return Video{Path: path}, nil, err
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
