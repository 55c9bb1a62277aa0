package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
)

// Problem is one defect found by Verify.
type Problem struct {
	Kind   string `json:"kind"` // "corrupt" (bytes do not match), "missing" (ref without object), "bad_ref"
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
	TempFiles  []string  `json:"temp_files,omitempty"` // leftovers of interrupted writes (harmless)
	Unreferred int       `json:"unreferenced_objects"` // objects no ref points at (e.g. after a crash)
}

// Clean reports whether Verify found no defect.
func (r *Report) Clean() bool { return len(r.Problems) == 0 }

// Verify re-hashes every object in the store, checks that each is a valid safetensors file and
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
		b, err := s.be.get(ctx, name, MaxObjectBytes)
		if err != nil {
			bad[digest] = err.Error()
			rep.Problems = append(rep.Problems, Problem{Kind: "corrupt", Digest: digest, Path: where, Cause: err.Error()})
			continue
		}
		rep.Bytes += int64(len(b))
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != digest {
			bad[digest] = "sha256 mismatch"
			rep.Problems = append(rep.Problems, Problem{Kind: "corrupt", Digest: digest, Path: where, Cause: "sha256 " + hex.EncodeToString(sum[:]) + " does not match its name"})
			continue
		}
		if _, err := ParseSafetensors(b); err != nil {
			bad[digest] = err.Error()
			rep.Problems = append(rep.Problems, Problem{Kind: "corrupt", Digest: digest, Path: where, Cause: err.Error()})
			continue
		}
		intact[digest] = true
		sizes[digest] = int64(len(b))
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
	if d, ok := s.be.(*dirBackend); ok {
		rep.TempFiles = d.tempFiles("cas", "ac", "manifests")
	}
	return rep, nil
}
