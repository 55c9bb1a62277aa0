package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
)

// KeySchema versions the canonical key encoding; bump it when KeySpec's meaning changes.
const KeySchema = 1

// KeySpec is everything that determines an object's bytes. Its canonical encoding is JSON with the
// fields in the fixed (alphabetical) order below, so equal specs give equal keys on every machine.
type KeySpec struct {
	Autorotate    bool   `json:"autorotate"`     // display rotation applied
	DType         DType  `json:"dtype"`          // U8, F32, F16
	Engine        string `json:"engine"`         // internal/version.Engine
	Geometry      string `json:"geometry"`       // canonical geometry spec of the config
	Indices       []int  `json:"indices"`        // the plan's frame indices, in plan order
	JPEGQuality   int    `json:"jpeg_quality"`   // cached pipeline only (0 for raw)
	JPEGSubsample string `json:"jpeg_subsample"` // cached pipeline only ("" for raw)
	Kernel        string `json:"kernel"`         // resize kernel name
	Layout        string `json:"layout"`         // NHWC
	Libraries     string `json:"libraries"`      // linked library versions that decide the pixels (decoder, swscale, …)
	// Loader and LoaderRequest name a harness loader's reading (docs/loaders.md) and its request
	// (canonical JSON); both empty for framesweep's own reading, so its keys are what they were.
	Loader        string `json:"loader,omitempty"`
	LoaderRequest string `json:"loader_request,omitempty"`
	Norm          string `json:"norm"`         // normalisation name ("none" for uint8)
	Pipeline      string `json:"pipeline"`     // raw | cached
	Schema        int    `json:"schema"`       // KeySchema
	Stream        int    `json:"stream"`       // index of the decoded video stream in the file
	VideoSHA256   string `json:"video_sha256"` // content digest of the source file
}

// Validate reports a spec that could not name a reproducible object.
func (k KeySpec) Validate() error {
	switch {
	case len(k.VideoSHA256) != 64:
		return wrapf(ErrBadSpec, "video digest %q", k.VideoSHA256)
	case k.Engine == "":
		return wrapf(ErrBadSpec, "no engine version")
	case len(k.Indices) == 0:
		return wrapf(ErrBadSpec, "no indices")
	case k.Pipeline != PipelineRaw && k.Pipeline != PipelineCached:
		return wrapf(ErrBadSpec, "pipeline %q", k.Pipeline)
	case k.DType.Size() == 0:
		return wrapf(ErrBadSpec, "dtype %q", k.DType)
	case k.Geometry == "" || k.Kernel == "":
		return wrapf(ErrBadSpec, "geometry %q kernel %q", k.Geometry, k.Kernel)
	case k.Libraries == "":
		return wrapf(ErrBadSpec, "no library versions")
	}
	return nil
}

// Canonical returns the versioned canonical encoding of the spec.
func (k KeySpec) Canonical() []byte {
	k.Schema = KeySchema
	b, err := json.Marshal(k)
	if err != nil { // only plain fields: cannot fail
		panic(err)
	}
	return append([]byte("framesweep-cache-key\n"), b...)
}

// Key returns the hex SHA-256 of the canonical encoding.
func (k KeySpec) Key() string {
	s := sha256.Sum256(k.Canonical())
	return hex.EncodeToString(s[:])
}

// Pipelines.
const (
	PipelineRaw    = "raw"
	PipelineCached = "cached"
)

// FileSHA256 returns the hex SHA-256 of a file's content (the video digest of a key).
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", &Error{Path: path, Op: "hash", Err: err}
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", &Error{Path: path, Op: "hash", Err: err}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
