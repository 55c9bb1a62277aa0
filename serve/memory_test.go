package serve

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSlotHeldUntilBuilt: a client that gives up while another request waits on the same pass does
// not free its slot until the pass ends (its object is being built, in memory, until then), so the
// objects being built never outnumber the slots; then everything is released and the dropped objects
// collected.
func TestSlotHeldUntilBuilt(t *testing.T) {
	s, url := start(t, Config{Roots: []string{testVideos(t)}, MaxInflight: 3, Window: 2 * time.Second}) // 3: two jobs do not start the batch at once
	ctx, cancel := context.WithCancel(context.Background())
	body := mustJSON(t, Request{Video: "nasa_13013.mp4", Policy: "uniform", Frames: 8, Resolution: "64x64"})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/frames", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	gone := make(chan error, 1)
	go func() {
		_, err := http.DefaultClient.Do(req)
		gone <- err
	}()
	waitFor(t, "the first request's batch", func() bool { return s.Stats().OpenBatches == 1 })
	other := make(chan resp, 1)
	go func() {
		other <- post(t, url, "/v1/frames", Request{Video: "nasa_13013.mp4", Policy: "uniform", Frames: 8, Resolution: "48x48"})
	}()
	waitFor(t, "both requests in the batch", func() bool { return s.Stats().Inflight == 2 })
	cancel()
	<-gone
	time.Sleep(100 * time.Millisecond) // the server sees the client leave
	switch st := s.Stats(); {
	case st.OpenBatches != 1:
		t.Fatalf("the batch no longer waits (the 2 s window passed?): %+v", st)
	case st.Inflight != 2:
		t.Fatalf("the slot of the client that left was freed before its build ended: %+v", st)
	}
	framesOf(t, <-other)
	waitFor(t, "every slot to be free", func() bool { return s.Stats().Inflight == 0 })
	if st := s.Stats(); st.ObjectsBuilt != 2 || st.OpenBatches != 0 || st.Building != 0 {
		t.Fatalf("%+v", st)
	}
}
