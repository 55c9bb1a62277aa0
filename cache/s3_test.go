package cache

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/s3test"
)

// TestStoreS3: a store on an S3 bucket through the real S3 client over HTTP (gofakes3 on 127.0.0.1):
// objects live under the URL's path as a key prefix; an object is written once (a second Put of the
// same content is a conditional write that the server refuses, and nothing is overwritten); a damaged
// object is found by every read and by Verify, and a Put repairs it; Verify of the bucket is clean.
func TestStoreS3(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	s, err := Open(ctx, srv.URL("caches/a"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.ObjectPath(strings.Repeat("0", 64)), "s3://"+srv.Bucket+"/caches/a/cas/sha256/00/") || strings.Contains(s.ObjectPath(strings.Repeat("0", 64)), "endpoint") {
		t.Fatalf("object path %s", s.ObjectPath(strings.Repeat("0", 64)))
	}
	key := testSpec(1).Key()
	obj := testObject(t, 3)
	ref, err := s.Put(ctx, key, obj)
	if err != nil {
		t.Fatal(err)
	}
	objPath := "/" + srv.Bucket + "/caches/a/" + ObjectName(ref.Digest)
	puts := func() (ok, refused int) {
		for _, r := range srv.Requests() {
			// The store's own writes of the object are conditional (the test's damage below is not).
			if r.Method == "PUT" && r.Path == objPath && r.IfNoneMatch == "*" {
				switch r.Status {
				case 200:
					ok++
				case 412:
					refused++
				}
			}
		}
		return
	}
	if ok, refused := puts(); ok != 1 || refused != 0 {
		t.Fatalf("first Put: %d PUTs of the object, %d refused", ok, refused)
	}
	if _, err := s.Put(ctx, key, obj); err != nil {
		t.Fatal(err)
	}
	if ok, refused := puts(); ok != 1 || refused != 1 {
		t.Fatalf("second Put: %d PUTs of the object, %d refused (want 1, 1: written once)", ok, refused)
	}
	if b, _, err := s.Get(ctx, key); err != nil || string(b) != string(obj) {
		t.Fatalf("get: %v", err)
	}

	// Damage the object behind the store's back (an unconditional write through the same bucket).
	bad := append([]byte(nil), obj...)
	bad[len(bad)-1] ^= 0xff
	if err := s.be.put(ctx, ObjectName(ref.Digest), bad); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(ctx, key); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged object read: %v", err)
	}
	if rep, err := s.Verify(ctx); err != nil || rep.Clean() || rep.Problems[0].Kind != "corrupt" {
		t.Fatalf("verify of the damaged bucket: %+v %v", rep, err)
	}
	if _, err := s.Put(ctx, key, obj); err != nil {
		t.Fatal(err)
	}
	if b, _, err := s.Get(ctx, key); err != nil || string(b) != string(obj) {
		t.Fatalf("after the repair: %v", err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.Clean() || rep.Objects != 1 || rep.Refs != 1 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// A spooled object goes through the same conditional write.
	sp, err := s.NewSpool()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if _, err := sp.Write(obj[8:]); err != nil {
		t.Fatal(err)
	}
	if r2, err := s.PutSpooled(ctx, key, obj[:8], sp, nil); err != nil || r2 != ref {
		t.Fatalf("spooled put of the same bytes: %+v %v", r2, err)
	}
	if ok, refused := puts(); ok != 2 || refused != 3 {
		t.Fatalf("%d successful conditional PUTs of the object, %d refused: want 2 (the first and the repair) and 3", ok, refused)
	}

	// Another prefix is another store; a prefix given twice is refused.
	other, err := Open(ctx, srv.URL("caches/b"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, _, err := other.Get(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("prefix caches/b sees caches/a's key: %v", err)
	}
	if _, err := Open(ctx, srv.URL("caches/a")+"&prefix=x/"); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("two prefixes: %v", err)
	}
}
