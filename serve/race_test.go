package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/framesweep/framesweep/decode"
)

// TestSwapRace: someone who can write inside a root swaps names between a hard link to a video inside
// the root and a symlink to a video outside it — a file name (x.mp4) and a directory (d, a real
// directory or a symlink to an outside one) — thousands of times (renameat2 RENAME_EXCHANGE, one
// atomic swap a call) while clients ask for those names through every endpoint. No response may carry
// anything of the outside video: not its description (probe), its digest (plan) or its frames; some
// must succeed with the inside video. Run with openat2 and with the O_NOFOLLOW walk that replaces it
// where the kernel lacks openat2.
func TestSwapRace(t *testing.T) {
	for _, mode := range []struct {
		name    string
		openat2 bool
	}{{"openat2", true}, {"walk", false}} {
		t.Run(mode.name, func(t *testing.T) {
			// Restored after the server stops (cleanups run last registered first).
			t.Cleanup(func(old bool) func() { return func() { useOpenat2 = old } }(useOpenat2))
			useOpenat2 = mode.openat2
			swapRace(t, 1500*time.Millisecond)
		})
	}
}

// raceVideo is what a response of one of the two videos says.
type raceVideo struct {
	info   decode.Info
	sha    string // the file's sha256
	frames string // sha256 of the frames tensor of raceReq
}

var raceReq = Request{Policy: "uniform", Frames: 2, Resolution: "32x32"}

func describeFor(t *testing.T, path string) raceVideo {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	info, err := decode.Probe(path, decode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := raceReq
	r.Video = path
	return raceVideo{info: info, sha: hex.EncodeToString(sum[:]), frames: direct(t, path, r).DataSHA256}
}

func swapRace(t *testing.T, d time.Duration) {
	vids := testVideos(t)
	root, outside := t.TempDir(), t.TempDir()
	copyFile(t, filepath.Join(vids, "h265_video.mp4"), filepath.Join(root, "a.mp4"))
	copyFile(t, filepath.Join(vids, "video_90.mov"), filepath.Join(outside, "x.mp4"))
	in, out := describeFor(t, filepath.Join(root, "a.mp4")), describeFor(t, filepath.Join(outside, "x.mp4"))
	if in.sha == out.sha || in.frames == out.frames || in.info.Frames == out.info.Frames {
		t.Fatal("the two videos must differ in digest, frames and frame count")
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// x.mp4 ⇄ x.alt: a hard link to a.mp4 and a symlink to the outside video; d ⇄ d.alt: a directory
	// holding such a hard link and a symlink to the outside directory.
	must(os.Link(filepath.Join(root, "a.mp4"), filepath.Join(root, "x.mp4")))
	must(os.Symlink(filepath.Join(outside, "x.mp4"), filepath.Join(root, "x.alt")))
	must(os.Mkdir(filepath.Join(root, "d"), 0o755))
	must(os.Link(filepath.Join(root, "a.mp4"), filepath.Join(root, "d", "x.mp4")))
	must(os.Symlink(outside, filepath.Join(root, "d.alt")))

	_, url := start(t, Config{Roots: []string{root}, MaxInflight: 16, Window: -1})
	var swaps atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			a, b := "x.mp4", "x.alt"
			if i%2 == 1 {
				a, b = "d", "d.alt"
			}
			if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, a), unix.AT_FDCWD, filepath.Join(root, b), unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return
			}
			swaps.Add(1)
		}
	})

	var mu sync.Mutex
	var leaks []string
	ok := map[string]int{}
	refused := map[int]int{}
	leak := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		leaks = append(leaks, fmt.Sprintf(format, a...))
	}
	deadline := time.Now().Add(d)
	var requests atomic.Int64
	var clients sync.WaitGroup
	for c := range 4 {
		clients.Go(func() {
			for i := c; time.Now().Before(deadline); i += 4 {
				requests.Add(1)
				name := []string{"x.mp4", "d/x.mp4"}[i%2]
				endpoint := []string{"probe", "plan", "frames"}[(i/2)%3]
				var r resp
				switch endpoint {
				case "probe":
					r = get(t, url, "/v1/probe?video="+name)
				default:
					req := raceReq
					req.Video = name
					r = post(t, url, "/v1/"+endpoint, req)
				}
				if r.status != http.StatusOK {
					mu.Lock()
					refused[r.status]++
					mu.Unlock()
					if strings.Contains(string(r.body), outside) {
						leak("%s %s: the error names the outside path: %s", endpoint, name, r.body)
					}
					continue
				}
				switch endpoint {
				case "probe":
					var info decode.Info
					if err := json.Unmarshal(r.body, &info); err != nil {
						t.Errorf("probe: %v", err)
					} else if info.Frames != in.info.Frames || info.Codec != in.info.Codec || !strings.HasPrefix(info.Path, root+"/") {
						leak("probe %s: %d frames of %s at %s (inside: %d frames of %s)", name, info.Frames, info.Codec, info.Path, in.info.Frames, in.info.Codec)
					}
				case "plan":
					var p PlanResponse
					if err := json.Unmarshal(r.body, &p); err != nil {
						t.Errorf("plan: %v", err)
					} else if p.VideoSHA256 != in.sha || !strings.HasPrefix(p.Path, root+"/") {
						leak("plan %s: video_sha256 %s at %s (outside: %t)", name, p.VideoSHA256, p.Path, p.VideoSHA256 == out.sha)
					}
				case "frames":
					_, meta := framesOf(t, r)
					if src := r.header.Get("X-Framesweep-Source-Sha256"); src != in.sha || r.header.Get("X-Framesweep-Frames-Sha256") != in.frames ||
						!strings.HasPrefix(meta["source_path"], root+"/") {
						leak("frames %s: source %s, frames %s, source_path %s (outside's frames: %t)", name, src,
							r.header.Get("X-Framesweep-Frames-Sha256"), meta["source_path"], r.header.Get("X-Framesweep-Frames-Sha256") == out.frames)
					}
				}
				mu.Lock()
				ok[endpoint]++
				mu.Unlock()
			}
		})
	}
	// The clients stop at the deadline; the swapper goes on until they are done.
	clients.Wait()
	close(stop)
	wg.Wait()
	t.Logf("%d swaps, %d requests: %v succeeded with the inside video, refused %v, %d leaked the outside video", swaps.Load(), requests.Load(), ok, refused, len(leaks))
	if len(leaks) > 0 {
		t.Fatalf("%d of %d requests got something of the file outside the root; first: %v", len(leaks), requests.Load(), leaks[:min(len(leaks), 5)])
	}
	if swaps.Load() < 1000 {
		t.Fatalf("only %d swaps: the race was not exercised", swaps.Load())
	}
	for _, e := range []string{"probe", "plan", "frames"} {
		if ok[e] == 0 {
			t.Fatalf("no %s request succeeded: the test proves nothing", e)
		}
	}
	mustHealthy(t, url)
}
