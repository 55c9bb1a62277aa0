package bucket

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"gocloud.dev/blob"
)

// OpenBucket opens a gocloud.dev/blob URL and returns the bucket and the URL without its query (for
// messages: the query may name an endpoint, never credentials, which come from the environment).
// Open wraps the bucket for the stores; tests write behind a store's back through OpenBucket.
//
// For object stores (s3://, gs://, azblob://) the URL's path is a key prefix inside the bucket:
// s3://bucket/runs/a?region=eu-west-1 is the keys under runs/a/ of bucket, as every S3 tool reads such
// a URL (gocloud's own drivers would silently ignore the path and write at the top of the bucket).
// gocloud's ?prefix= says the same and may be given instead, not as well. file:// URLs keep their path
// as the directory.
//
// Driver settings travel in the query: for an S3-protocol server other than AWS,
// s3://bucket/prefix?endpoint=http://host:9000&use_path_style=true&region=us-east-1; credentials come
// from the drivers' usual environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile,
// GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT/AZURE_STORAGE_KEY, …).
func OpenBucket(ctx context.Context, loc string) (*blob.Bucket, string, error) {
	u, err := url.Parse(loc)
	if err != nil {
		return nil, "", fmt.Errorf("bucket URL %q: %v", loc, err)
	}
	base := *u
	base.RawQuery, base.ForceQuery, base.Fragment = "", false, ""
	if u.Scheme == "file" {
		if err := fileBucketDir(u.Path); err != nil {
			return nil, "", err
		}
		b, err := blob.OpenBucket(ctx, loc)
		return b, base.String(), err
	}
	if u.Host == "" {
		return nil, "", fmt.Errorf("bucket URL %q: no bucket name (want %s://BUCKET[/PREFIX])", loc, u.Scheme)
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		q := u.Query()
		if q.Get("prefix") != "" {
			return nil, "", fmt.Errorf("bucket URL %q: give the prefix in the path or as ?prefix=, not both", loc)
		}
		q.Set("prefix", p+"/")
		open := *u
		open.Path, open.RawPath, open.RawQuery = "", "", q.Encode()
		loc = open.String()
		base.Path = "/" + p
	}
	b, err := blob.OpenBucket(ctx, loc)
	return b, base.String(), err
}

// fileBucketDir checks the directory of a file:// URL: the driver does not create it, and its own
// error is a bare stat.
func fileBucketDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return &fileDirError{dir: dir, why: "is not a directory"}
	case err != nil && os.IsNotExist(err):
		return &fileDirError{dir: dir, why: "does not exist (a file:// store is not created: make the directory, or give its plain path, which is)", err: fs.ErrNotExist}
	case err != nil:
		return err
	}
	return nil
}

// fileDirError is a file:// URL whose directory is missing or not a directory.
type fileDirError struct {
	dir, why string
	err      error
}

func (e *fileDirError) Error() string { return "the directory " + e.dir + " " + e.why }
func (e *fileDirError) Unwrap() error { return e.err }

// IsURL reports whether loc names a blob bucket rather than a local directory: it starts with a
// URL scheme (a letter, then letters, digits, '+', '-' or '.', as RFC 3986 has it) followed by
// "://". So "file:///d" and "s3://b" are URLs, "./a://b" and "/x/a://b" are directories.
func IsURL(loc string) bool {
	i := strings.Index(loc, "://")
	if i <= 0 {
		return false
	}
	for j, c := range loc[:i] {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}
