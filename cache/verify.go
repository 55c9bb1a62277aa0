package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"strings"
)

// Problem is one defect found by Verify.
type Problem struct {
	Kind   string `json:"kind"` // "corrupt" (bytes do not match), "missing" (ref without object), "bad_ref", "leftover" (a dead writer's temp file)
	Key    string `json:"key,omitempty"`
	Digest string `json:"sha256,omitempty"`
	Path   string `json:"path"`
	Cause  string `json:"cause"`
}

// Report is the result of Verify.
type Report struct {
	Store      string    `json:"store"`
	Refs       int       `json:"refs"`
	Objects    int       `json:"objects"`
	Bytes      int64     `json:"bytes"`
	OK         int       `json:"ok"`
	Problems   []Problem `json:"problems"`
	InFlight   []string  `json:"in_flight,omitempty"`  // temp files a live writer holds (another process writing now)
	Unreferred int       `json:"unreferenced_objects"` // objects no ref points at (e.g. after a crash)
}

// Clean reports whether Verify found no defect.
func (r *Report) Clean() bool { return len(r.Problems) == 0 }

// Verify re-hashes every object in the store (streaming: memory stays bounded by the safetensors
// header cap, whatever the object size), checks that each is a valid safetensors file and
// that every ref points at an intact object. It returns an error only when the store itself cannot
// be listed; defects go into the report.
func (s *Store) Verify(ctx context.Context) (*Report, error) {
	rep := &Report{Store: s.loc, Problems: []Problem{}}
	objs, err := s.be.list(ctx, "cas/sha256")
	if err != nil {
		return nil, &Error{Path: s.loc, Op: "verify", Err: err}
	}
	intact := map[string]bool{}
	sizes := map[string]int64{}
	bad := map[string]string{}
	for _, name := range objs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rep.Objects++
		digest := path.Base(name)
		where := s.be.where(name)
		if !validHex(digest) || name != ObjectName(digest) {
			rep.Problems = append(rep.Problems, Problem{Kind: "corrupt", Path: where, Cause: "name is not a sha256 object name"})
			continue
		}
		size, cerr := s.checkObject(ctx, name, digest)
		if err := ctx.Err(); err != nil {
			return nil, err // a cancelled read is not a corrupt object
		}
		if cerr != nil {
			cause := cerr.Error()
			bad[digest] = cause
			rep.Problems = append(rep.Problems, Problem{Kind: "corrupt", Digest: digest, Path: where, Cause: cause})
			continue
		}
		rep.Bytes += size
		intact[digest] = true
		sizes[digest] = size
	}
	refs, err := s.be.list(ctx, "ac")
	if err != nil {
		return nil, &Error{Path: s.loc, Op: "verify", Err: err}
	}
	used := map[string]bool{}
	for _, name := range refs {
		rep.Refs++
		key := strings.TrimSuffix(path.Base(name), ".json")
		ref, err := s.Lookup(ctx, key)
		if err != nil || name != refName(key) {
			cause := "ref name is not <key>.json"
			if err != nil {
				cause = err.Error()
			}
			rep.Problems = append(rep.Problems, Problem{Kind: "bad_ref", Key: key, Path: s.be.where(name), Cause: cause})
			continue
		}
		used[ref.Digest] = true
		where := s.ObjectPath(ref.Digest)
		switch {
		case intact[ref.Digest]:
			if sizes[ref.Digest] != ref.Size {
				rep.Problems = append(rep.Problems, Problem{Kind: "bad_ref", Key: key, Digest: ref.Digest, Path: where, Cause: "ref size differs from object"})
				continue
			}
			rep.OK++
		case bad[ref.Digest] != "":
			// Already listed as a corrupt object; name the key that loses it.
			rep.Problems = append(rep.Problems, Problem{Kind: "corrupt", Key: key, Digest: ref.Digest, Path: where, Cause: bad[ref.Digest]})
		default:
			rep.Problems = append(rep.Problems, Problem{Kind: "missing", Key: key, Digest: ref.Digest, Path: where, Cause: "object not in store"})
		}
	}
	for d := range intact {
		if !used[d] {
			rep.Unreferred++
		}
	}
	dead, live, err := s.be.leftovers()
	if err != nil {
		return nil, &Error{Path: s.loc, Op: "verify", Err: err}
	}
	for _, t := range dead {
		rep.Problems = append(rep.Problems, Problem{Kind: "leftover", Path: t.Path,
			Cause: fmt.Sprintf("temp file of an interrupted write (%d bytes, no live writer holds it); the next extract into this cache removes it", t.Size)})
	}
	for _, t := range live {
		rep.InFlight = append(rep.InFlight, t.Path)
	}
	return rep, nil
}

// checkObject streams one object through sha256 while its safetensors header is validated from the
// first bytes; the data section is checked against the header by length only, so memory is bounded
// by the header cap. It returns the object size and, for a defect, an error wrapping ErrCorrupt,
// ErrTooLarge or ErrNotFound (a digest mismatch wins over a header defect: the bytes changed).
func (s *Store) checkObject(ctx context.Context, name, digest string) (int64, error) {
	rc, size, err := s.be.open(ctx, name)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	if size > MaxObjectBytes {
		return size, wrapf(ErrTooLarge, "%d bytes > %d", size, MaxObjectBytes)
	}
	h := sha256.New()
	r := &ctxReader{ctx: ctx, r: rc}
	head, herr := CheckSafetensors(io.TeeReader(r, h), size)
	rest, err := io.Copy(h, r)
	if err != nil {
		return size, err
	}
	if head+rest != size {
		return size, wrapf(ErrCorrupt, "read %d bytes of a %d-byte object (changed while reading)", head+rest, size)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != digest {
		return size, wrapf(ErrCorrupt, "sha256 %s does not match its name", sum)
	}
	if herr != nil {
		return size, fmt.Errorf("%w: %w", ErrCorrupt, herr)
	}
	return size, nil
}

// ctxReader stops a long object read when the context is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
