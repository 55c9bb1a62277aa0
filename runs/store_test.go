package runs

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/framesweep/framesweep/internal/bucket"
	"github.com/framesweep/framesweep/internal/testsupport/s3test"
)

func writeLease(t testing.TB, url string, l lease) {
	t.Helper()
	b, _ := json.Marshal(l)
	bk, _, err := bucket.OpenBucket(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	if err := bk.WriteAll(context.Background(), bucketLock, b, nil); err != nil {
		t.Fatal(err)
	}
}

func leaseExists(t testing.TB, url string) bool {
	t.Helper()
	bk, _, err := bucket.OpenBucket(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	ok, err := bk.Exists(context.Background(), bucketLock)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestBucketLease: a lease of a process of this host that has exited, or one whose heartbeat is older
// than leaseTTL, is taken over; a fresh one of another host is not.
func TestBucketLease(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	url := srv.URL("runs/lease")
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, c := range []struct {
		l    lease
		take bool
	}{
		{lease{Host: host, PID: dead.Process.Pid, Token: "a", Heartbeat: now.Format(time.RFC3339Nano)}, true},
		{lease{Host: "elsewhere", PID: 1, Token: "b", Heartbeat: now.Add(-2 * leaseTTL).Format(time.RFC3339Nano)}, true},
		{lease{Host: "elsewhere", PID: 1, Token: "c", Heartbeat: now.Format(time.RFC3339Nano)}, false},
		{lease{Host: host, PID: os.Getpid(), Token: "d", Heartbeat: now.Format(time.RFC3339Nano)}, true}, // an earlier run of this container
	} {
		writeLease(t, url, c.l)
		rs, err := openRunStore(ctx, url, false)
		if err != nil {
			t.Fatal(err)
		}
		unlock, err := rs.lock(ctx)
		if c.take != (err == nil) {
			t.Errorf("lease %+v: take over = %v (%v)", c.l, err == nil, err)
		}
		if err == nil {
			unlock()
			if leaseExists(t, url) {
				t.Errorf("unlock left lock.json")
			}
		}
		rs.close()
	}
}
