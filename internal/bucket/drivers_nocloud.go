//go:build nocloud

package bucket

import (
	"context"
	"fmt"
	"net/url"

	"gocloud.dev/blob"
)

// CloudDrivers reports whether this binary has the object-store drivers (s3, gs, azblob).
const CloudDrivers = false

// Built with -tags nocloud: the schemes of the drivers left out stay registered, with an opener that
// says why they cannot open, instead of gocloud's "no driver registered for ...".
func init() {
	for scheme, driver := range map[string]string{"s3": "s3blob", "gs": "gcsblob", "azblob": "azureblob"} {
		blob.DefaultURLMux().RegisterBucket(scheme, missingDriver{scheme: scheme, driver: driver})
	}
}

type missingDriver struct{ scheme, driver string }

func (m missingDriver) OpenBucketURL(_ context.Context, u *url.URL) (*blob.Bucket, error) {
	return nil, fmt.Errorf("%s://%s: this binary was built without the %s driver (gocloud.dev/blob/%s; built with -tags nocloud): rebuild without that tag to use %s:// URLs",
		m.scheme, u.Host, m.scheme, m.driver, m.scheme)
}
