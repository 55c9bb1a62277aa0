// Package cache is framesweep's content-addressed store of model inputs.
//
// An object is a safetensors file (our own canonical writer: sorted tensor names, space-padded 8-byte
// aligned header, little-endian, C order) holding the frames of one (video, config, pipeline) as uint8
// RGB [N,H,W,3] or normalised float32/float16, with provenance in __metadata__.
//
// Layout of a store (a local directory or a gocloud.dev/blob bucket):
//
//	cas/sha256/ab/<sha256 of the object bytes>   immutable object bytes (content-addressed)
//	ac/ab/<key>.json                              key → {digest, size}: the action cache
//	manifests/<run>.jsonl                         one line per object, written by each extract run
//
// The key is the SHA-256 of a versioned canonical encoding of everything that determines the bytes
// (KeySpec). Splitting the key from the content digest (as Bazel's CAS/AC do) lets every read and
// `verify` re-hash an object against its name, so a flipped byte anywhere, header included, is caught.
//
// Writes to local directories go temp file → fsync → rename → fsync(dir): a reader never sees a partial
// object, and concurrent writers of the same object race harmlessly (identical bytes, atomic rename).
// The object is published before its AC entry, so a crash leaves at worst an orphan blob, never a key
// that points at nothing.
//
// The package is pure Go (no cgo); the JPEG codec of the cached pipeline lives in resize/jpeg.go.
package cache
