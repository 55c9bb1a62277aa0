package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sync/singleflight"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/engine/procfd"
	"github.com/framesweep/framesweep/pipeline"
)

// CodeBadVideo is the code of a 422 for a file that is not a decodable video (no video stream, a
// playlist, truncated, over the frame-area limit, …) or a pass that could not decode what it needed.
const CodeBadVideo = "bad_video"

// fileID identifies one version of a file: a change to it (rewrite, replace, touch) changes the ID,
// so a cached description is never used for different bytes. The ctime is in it because no user can
// set it (utimensat sets the mtime, and changes the ctime).
type fileID struct {
	Dev, Ino         uint64
	Size             int64
	MtimeNS, CtimeNS int64
}

// fileIdentity is the version and the link count of a file from its fstat.
func fileIdentity(st os.FileInfo) (fileID, uint64, error) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, 0, fmt.Errorf("%s: no file identity on this platform", st.Name())
	}
	return fileID{Dev: uint64(sys.Dev), Ino: sys.Ino, Size: st.Size(), MtimeNS: st.ModTime().UnixNano(),
		CtimeNS: sys.Ctim.Sec*1e9 + sys.Ctim.Nsec}, uint64(sys.Nlink), nil
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

// options are the engine options that open k's video (the request's other options decide only the
// bytes of its object), on base: the server's decoding (its worker pool with --worker).
func (k passKey) options(base pipeline.Options) pipeline.Options {
	o := base
	o.NoAutorotate, o.OnDamaged = k.NoRot, k.OnDamaged
	if k.Stream >= 0 {
		o.Stream = decode.StreamAt(k.Stream)
	}
	return o
}

// videos describes videos once per file version (sha256 of the bytes + the decoder's index scan) and
// keeps the descriptions in an LRU; concurrent requests for a video being described share one
// description (singleflight).
type videos struct {
	base   pipeline.Options // how the server decodes: in process, or in its pool of worker processes
	cache  *lru[videoKey, pipeline.Video]
	flight singleflight.Group
}

func newVideos(base pipeline.Options, entries int) *videos {
	return &videos{base: base, cache: newLRU[videoKey, pipeline.Video](int64(entries), func(pipeline.Video) int64 { return 1 })}
}

// flightKey names a description in the single flight (a videoKey as a string).
func (k videoKey) flightKey() string {
	return fmt.Sprintf("%d:%d:%d:%d:%d:%d:%t:%s", k.ID.Dev, k.ID.Ino, k.ID.Size, k.ID.MtimeNS, k.ID.CtimeNS, k.Stream, k.NoRot, k.Path)
}

// get returns the description of the video k names, describing it (once) from f, the file the request
// opened, if needed. A request that gives up stops waiting; the description goes on for the others (and
// the LRU), through a descriptor of its own.
func (vs *videos) get(ctx context.Context, k passKey, f *os.File) (pipeline.Video, error) {
	if v, ok := vs.cache.get(k.videoKey); ok {
		return v, nil
	}
	// The description may outlive this request (others may be waiting for it): it reads a duplicate,
	// closed by whichever ends last — the description, or this request when another one's describes.
	dup, err := procfd.Dup(f, k.Path)
	if err != nil {
		return pipeline.Video{}, err
	}
	var once sync.Once
	release := func() { once.Do(func() { dup.Close() }) }
	ch := vs.flight.DoChan(k.flightKey(), func() (any, error) {
		defer release()
		if v, ok := vs.cache.get(k.videoKey); ok { // described while this request looked
			return v, nil
		}
		// Not the request's context: other requests may be waiting for the same description.
		v, err := vs.describe(context.WithoutCancel(ctx), k, dup)
		if err == nil {
			vs.cache.put(k.videoKey, v)
		}
		return v, err
	})
	select {
	case r := <-ch:
		release()
		return r.Val.(pipeline.Video), r.Err
	case <-ctx.Done():
		go func() { <-ch; release() }()
		return pipeline.Video{}, ctx.Err()
	}
}

// forget drops a description (the file changed under it).
func (vs *videos) forget(k videoKey) { vs.cache.delete(k) }

// describe hashes the opened file and runs the decoder's index scan on it through the engine's source
// layer (in a worker process when configured); the file must be the same version before and after.
func (vs *videos) describe(ctx context.Context, k passKey, f *os.File) (pipeline.Video, error) {
	v, src, err := pipeline.OpenVideo(ctx, pipeline.VideoRef{Path: k.Path, File: f}, k.options(vs.base))
	if err != nil {
		return v, videoErr(err)
	}
	src.Close()
	st, err := f.Stat()
	if err != nil {
		return v, changed(k.Path)
	}
	if id, _, err := fileIdentity(st); err != nil || id != k.ID {
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

// open opens a Source for one pass over v through the engine's source layer, from f (the batch's
// descriptor of the file), with what v already knows (its digest and description): a worker Source
// takes the description, an in-process open checks the file still matches it (409 and the description
// forgotten otherwise).
func (vs *videos) open(ctx context.Context, k passKey, v pipeline.Video, f *os.File) (pipeline.Source, error) {
	_, src, err := pipeline.OpenVideo(ctx, pipeline.VideoRef{Path: k.Path, SHA256: v.SHA256, Info: &v.Info, File: f}, k.options(vs.base))
	switch {
	case errors.Is(err, pipeline.ErrChanged):
		vs.forget(k.videoKey)
		return nil, changed(k.Path)
	case err != nil:
		return nil, videoErr(err)
	}
	return src, nil
}
