//go:build nocloud

package bucket

import (
	"context"
	"strings"
	"testing"
)

// TestNoCloudSaysSo: in a -tags nocloud build an object-store URL fails with one line naming the
// missing driver and the tag, not gocloud's "no driver registered".
func TestNoCloudSaysSo(t *testing.T) {
	for _, c := range []struct{ loc, driver string }{
		{"s3://bucket/runs/a?region=eu-west-1", "s3 driver"},
		{"gs://bucket/p", "gs driver"},
		{"azblob://container", "azblob driver"},
	} {
		_, err := Open(context.Background(), c.loc)
		if err == nil {
			t.Fatalf("%s opened in a nocloud build", c.loc)
		}
		msg := err.Error()
		if !strings.Contains(msg, "built without the "+c.driver) || !strings.Contains(msg, "-tags nocloud") || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q", c.loc, msg)
		}
	}
	if CloudDrivers {
		t.Error("CloudDrivers is true in a nocloud build")
	}
}
