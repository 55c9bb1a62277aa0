package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"syscall"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/worker"
	"github.com/framesweep/framesweep/pipeline"
)

// CodeBadVideo is the code of a 422 for a file that is not a decodable video (no video stream, a
// playlist, truncated, over the frame-area limit, …) or a pass that could not decode what it needed.
const CodeBadVideo = "bad_video"

// fileID identifies one version of a file: a change to it (rewrite, replace, touch) changes the ID,
// so a cached description is never used for different bytes.
type fileID struct {
	Dev, Ino uint64
	Size     int64
	MtimeNS  int64
}

func statID(path string) (fileID, error) {
	st, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, fmt.Errorf("%s: no file identity on this platform", path)
	}
	return fileID{Dev: uint64(sys.Dev), Ino: sys.Ino, Size: st.Size(), MtimeNS: st.ModTime().UnixNano()}, nil
}

// videoKey is what a video's description depends on: the file version and the decode options that
// change what Info reports (the stream, the orientation).
type videoKey struct {
	Path   string
	ID     fileID
	Stream int // -1: FFmpeg's best video stream
	NoRot  bool
}

// passKey is what one decoding pass is for: a video description and the damage policy its Source
// decodes with. Requests with equal passKeys can share a pass.
type passKey struct {
	videoKey
	OnDamaged decode.DamagePolicy
}

func keyFor(path string, id fileID, o pipeline.Options) passKey {
	k := passKey{videoKey: videoKey{Path: path, ID: id, Stream: -1, NoRot: o.NoAutorotate}, OnDamaged: o.OnDamaged}
	if o.Stream != nil {
		k.Stream = *o.Stream
	}
	if k.OnDamaged == "" {
		k.OnDamaged = decode.DamagedFail
	}
	return k
}

func (k passKey) decodeOptions() decode.Options {
	o := decode.Options{NoAutorotate: k.NoRot, OnDamaged: k.OnDamaged}
	if k.Stream >= 0 {
		o.Stream = decode.StreamAt(k.Stream)
	}
	return o
}

// videos describes videos once per file version (sha256 of the bytes + the decoder's index scan) and
// keeps the descriptions in an LRU; concurrent requests for a video being described wait for it.
type videos struct {
	worker *worker.Limits
	cache  *lru[videoKey, pipeline.Video]

	mu   sync.Mutex
	busy map[videoKey]*videoCall
}

type videoCall struct {
	done chan struct{}
	v    pipeline.Video
	err  error
}

func newVideos(limits *worker.Limits, entries int) *videos {
	return &videos{worker: limits, cache: newLRU[videoKey, pipeline.Video](int64(entries), func(pipeline.Video) int64 { return 1 }),
		busy: map[videoKey]*videoCall{}}
}

// get returns the description of the video k names, describing it (once) if needed.
func (vs *videos) get(ctx context.Context, k passKey) (pipeline.Video, error) {
	vs.mu.Lock()
	if v, ok := vs.cache.get(k.videoKey); ok {
		vs.mu.Unlock()
		return v, nil
	}
	c := vs.busy[k.videoKey]
	if c == nil {
		c = &videoCall{done: make(chan struct{})}
		vs.busy[k.videoKey] = c
		go func() {
			// Not the request's context: other requests may be waiting for the same description.
			c.v, c.err = vs.describe(context.WithoutCancel(ctx), k)
			vs.mu.Lock()
			if c.err == nil {
				vs.cache.put(k.videoKey, c.v)
			}
			delete(vs.busy, k.videoKey)
			vs.mu.Unlock()
			close(c.done)
		}()
	}
	vs.mu.Unlock()
	select {
	case <-c.done:
		return c.v, c.err
	case <-ctx.Done():
		return pipeline.Video{}, ctx.Err()
	}
}

// forget drops a description (the file changed under it).
func (vs *videos) forget(k videoKey) { vs.cache.delete(k) }

// describe hashes the file and runs the decoder's index scan (in a worker process when configured);
// the file must be the same version before and after.
func (vs *videos) describe(ctx context.Context, k passKey) (pipeline.Video, error) {
	v := pipeline.Video{Path: k.Path}
	digest, err := cache.FileSHA256(k.Path)
	if err != nil {
		return v, videoErr(err)
	}
	v.SHA256 = digest
	opts := k.decodeOptions()
	if vs.worker != nil {
		r := &worker.Runner{Limits: *vs.worker}
		if v.Info, err = r.Probe(ctx, k.Path, opts, false); err != nil {
			return v, videoErr(err)
		}
	} else {
		d, err := decode.Open(k.Path, opts)
		if err != nil {
			return v, videoErr(err)
		}
		v.Info = d.Info()
		d.Close()
	}
	if id, err := statID(k.Path); err != nil || id != k.ID {
		return v, changed(k.Path)
	}
	return v, nil
}

func changed(path string) error {
	return apiErr(http.StatusConflict, "changed", "%s changed while it was being read; retry", path)
}

// videoErr maps a decoder error to the API: refused inputs are 403 (a protocol) or 422 (not a video).
func videoErr(err error) error {
	switch {
	case errors.Is(err, decode.ErrNetworkProtocol):
		return forbidden("%v", err)
	case errors.Is(err, decode.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return apiErr(http.StatusNotFound, CodeNotFound, "%v", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apiErr(http.StatusServiceUnavailable, CodeUnavailable, "%v", err)
	}
	return apiErr(http.StatusUnprocessableEntity, CodeBadVideo, "%v", err)
}

// open opens a Source for one pass over v (in process, or a supervised worker per Read) and checks it
// is the video v describes.
func (vs *videos) open(ctx context.Context, k passKey, v pipeline.Video) (pipeline.Source, error) {
	opts := k.decodeOptions()
	if vs.worker != nil {
		return pipeline.WorkerSource(ctx, &worker.Runner{Limits: *vs.worker}, k.Path, opts, v.Info), nil
	}
	d, err := decode.Open(k.Path, opts)
	if err != nil {
		return nil, videoErr(err)
	}
	in := d.Info()
	if in.Frames != v.Info.Frames || in.StreamIndex != v.Info.StreamIndex || in.OutWidth != v.Info.OutWidth || in.OutHeight != v.Info.OutHeight {
		d.Close()
		vs.forget(k.videoKey)
		return nil, changed(k.Path)
	}
	return d, nil
}
