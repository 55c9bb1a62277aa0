// Package bucket is the one gocloud.dev/blob layer of the module: it opens a bucket from a URL (a key
// prefix in the URL's path; the object-store drivers unless built with -tags nocloud) and gives the
// stores above it — the content-addressed cache (package cache) and the RUNs of a sweep (package
// runs) — the operations they share, with a missing key and an existing one (a conditional write that
// lost) as typed errors. It is pure Go.
package bucket

import (
	"context"
	"errors"
	"io"
	"sort"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// URLs; the object-store drivers are in drivers_cloud.go
	"gocloud.dev/gcerrors"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrNotFound: no object has this key.
	ErrNotFound = errors.New("no such object")
	// ErrExists: a write that creates only (IfNotExist) found the key taken.
	ErrExists = errors.New("the object exists already")
)

// Bucket is an opened bucket and its URL without the query (what messages name). Close releases it.
type Bucket struct {
	b    *blob.Bucket
	base string // scheme://bucket/prefix, no trailing slash
}

// Open opens the bucket at loc, a URL (IsURL): OpenBucket's rules.
func Open(ctx context.Context, loc string) (*Bucket, error) {
	b, base, err := OpenBucket(ctx, loc)
	if err != nil {
		return nil, err
	}
	return &Bucket{b: b, base: strings.TrimRight(base, "/")}, nil
}

// Base is the bucket's URL without its query or a trailing slash.
func (b *Bucket) Base() string { return b.base }

// Where is the URL of key name, for messages.
func (b *Bucket) Where(name string) string { return b.base + "/" + name }

// notFound turns gocloud's NotFound into ErrNotFound.
func notFound(err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return ErrNotFound
	}
	return err
}

// NewReader opens name for reading and gives its size; ErrNotFound when absent.
func (b *Bucket) NewReader(ctx context.Context, name string) (io.ReadCloser, int64, error) {
	r, err := b.b.NewReader(ctx, name, nil)
	if err != nil {
		return nil, 0, notFound(err)
	}
	return r, r.Size(), nil
}

// ReadAll reads name whole; ErrNotFound when absent. For small files (a lock, a RUN's run.json): a
// reader of objects bounds them with NewReader's size.
func (b *Bucket) ReadAll(ctx context.Context, name string) ([]byte, error) {
	data, err := b.b.ReadAll(ctx, name)
	return data, notFound(err)
}

// Exists reports whether name exists.
func (b *Bucket) Exists(ctx context.Context, name string) (bool, error) { return b.b.Exists(ctx, name) }

// Write publishes what r yields under name, whole or not at all (an object store publishes on Close;
// cancelling the write's context before Close aborts it, so a failed read of r never publishes).
// With create set the write is conditional (IfNotExist: S3's If-None-Match: *, GCS's and Azure's
// equivalents) and a taken name is ErrExists.
func (b *Bucket) Write(ctx context.Context, name string, r io.Reader, contentType string, create bool) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.b.NewWriter(wctx, name, &blob.WriterOptions{ContentType: contentType, IfNotExist: create})
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		cancel()
		w.Close()
		return err
	}
	err = w.Close()
	if create && gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return ErrExists
	}
	return err
}

// List lists the keys under prefix, sorted, without directories and without the sidecar and temp
// files the file:// driver keeps beside objects (.attrs, .tmp).
func (b *Bucket) List(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	it := b.b.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if !o.IsDir && !strings.HasSuffix(o.Key, ".attrs") && !strings.HasSuffix(o.Key, ".tmp") {
			out = append(out, o.Key)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Delete removes name; ErrNotFound when absent.
func (b *Bucket) Delete(ctx context.Context, name string) error {
	return notFound(b.b.Delete(ctx, name))
}

// Close releases the bucket (idempotent).
func (b *Bucket) Close() error {
	if b.b == nil {
		return nil
	}
	err := b.b.Close()
	b.b = nil
	return err
}
