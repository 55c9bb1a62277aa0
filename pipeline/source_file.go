package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/internal/engine/procfd"
)

// Opening a video by its descriptor (VideoRef.File). A caller that opened a file and checked it (serve:
// beneath its root, a regular file) must have that file hashed and decoded, not whatever its name leads
// to a moment later. So the digest is read through the descriptor, and the decoder opens
// /proc/self/fd/N of a duplicate the Source owns (the inode it holds) — in this process, or in a worker
// that inherits the duplicate. Path only names the video.

// sha256 is the video's content digest, read through the descriptor when the ref has one (ReadAt from
// offset 0: the descriptor's own offset does not move), else from the path.
func (ref VideoRef) sha256() (string, error) {
	if ref.File == nil {
		return cache.FileSHA256(ref.Path)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(ref.File, 0, math.MaxInt64)); err != nil {
		return "", &cache.Error{Path: ref.Path, Op: "hash", Err: err}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// openWorkerFile is openDecoder for a ref with a File and a worker: the worker decodes a duplicate of
// the descriptor the Source owns (closed by its Close).
func openWorkerFile(ctx context.Context, ref VideoRef, o Options) (Source, error) {
	f, err := procfd.Dup(ref.File, ref.Path)
	if err != nil {
		return nil, err
	}
	opts := o.decodeOptions()
	r := o.runner()
	ws := &workerSource{ctx: ctx, r: r, path: ref.Path, file: f, opts: opts}
	if ref.Info != nil {
		ws.info = *ref.Info
	} else if ws.info, err = r.ProbeFile(ctx, f, ref.Path, opts, o.FramesDetail); err != nil {
		f.Close()
		return nil, err
	}
	return ws, nil
}

// openFile is openLocal for a ref with a File: the Source decodes /proc/self/fd/N of a duplicate of
// the descriptor it owns (closed by its Close).
func openFile(ref VideoRef, opts decode.Options, detail bool) (LocalSource, error) {
	f, err := procfd.Dup(ref.File, ref.Path)
	if err != nil {
		return nil, err
	}
	fdp := procfd.FilePath(f)
	opts.Name = ref.Path // every message names the video, not /proc/self/fd/N
	d, err := decode.Open(fdp, opts)
	if err != nil {
		f.Close()
		return nil, procfd.Rename(err, fdp, ref.Path)
	}
	fs := &fileSource{src: d, file: f, fdPath: fdp, name: ref.Path}
	if detail {
		fs.src = &detailed{Video: d}
	}
	if ref.Info != nil && !sameVideo(fs.Info(), *ref.Info) {
		fs.Close()
		return nil, fmt.Errorf("%s: %w", ref.Path, ErrChanged)
	}
	return fs, nil
}

// fileSource is an in-process LocalSource decoding /proc/self/fd/N of the descriptor it owns; what it
// reports names the video by its name, not by that descriptor path.
type fileSource struct {
	src          LocalSource
	file         *os.File
	fdPath, name string
}

func (s *fileSource) Header() decode.StreamHeader { return s.src.Header() }
func (s *fileSource) Index() decode.Index         { return s.src.Index() }
func (s *fileSource) NumFrames() int              { return s.src.NumFrames() }
func (s *fileSource) Packets() int                { return s.src.Packets() }

func (s *fileSource) ReadCost(indices []int) (decode.ReadCost, error) {
	c, err := s.src.ReadCost(indices)
	return c, procfd.Rename(err, s.fdPath, s.name)
}

func (s *fileSource) Sequential(o decode.SeqOptions, fn func(*decode.SeqFrame) (bool, error)) (decode.SeqStats, error) {
	st, err := s.src.Sequential(o, fn)
	return st, procfd.Rename(err, s.fdPath, s.name)
}

func (s *fileSource) Info() decode.Info {
	in := s.src.Info()
	in.Path = s.name
	return in
}

func (s *fileSource) Read(indices []int, fn func(*decode.Frame) error) (decode.Stats, error) {
	st, err := s.src.Read(indices, fn)
	return st, procfd.Rename(err, s.fdPath, s.name)
}

// Close closes the decoder, then the descriptor it read (idempotent).
func (s *fileSource) Close() error {
	err := s.src.Close()
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
	return err
}
