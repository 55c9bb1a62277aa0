package worker

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/framesweep/framesweep/decode"
)

// repoVideo returns a path under the repository's testdata/videos.
func repoVideo(t *testing.T, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "videos", name)
}

func copyTo(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadFile: a worker given a descriptor (exec.Cmd.ExtraFiles) describes and decodes the file it
// holds, not what the name leads to: the name is replaced by another video after the open, and the
// worker still delivers the opened file's description and frames, bit for bit those decode returns in
// process; Info.Path and errors carry the name, never /proc/self/fd.
func TestReadFile(t *testing.T) {
	t.Parallel()
	orig := repoVideo(t, "nasa_13013.mp4")
	dir := t.TempDir()
	p := filepath.Join(dir, "v.mp4")
	copyTo(t, orig, p)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	copyTo(t, repoVideo(t, "video_90.mov"), filepath.Join(dir, "other"))
	if err := os.Rename(filepath.Join(dir, "other"), p); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Exe: workerBin(t), Limits: Limits{Timeout: time.Minute}}
	ctx := context.Background()
	info, err := r.ProbeFile(ctx, f, p, decode.Options{}, false)
	if err != nil || info.Frames != 390 || info.Path != p {
		t.Fatalf("ProbeFile: %d frames at %q, %v (want the opened file's 390 at %s)", info.Frames, info.Path, err, p)
	}
	idx := []int{0, 150, 389}
	var got, want [][]byte
	if _, err := r.ReadFile(ctx, f, p, idx, decode.Options{}, func(fr *decode.Frame) error {
		got = append(got, bytes.Clone(fr.Packed()))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	v, err := decode.Open(orig, decode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Read(idx, func(fr *decode.Frame) error { want = append(want, bytes.Clone(fr.Packed())); return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range idx {
		if i >= len(got) || !bytes.Equal(got[i], want[i]) {
			t.Fatalf("frame %d through the descriptor differs from the opened file's", idx[i])
		}
	}
	_, err = r.ReadFile(ctx, f, p, []int{390}, decode.Options{}, func(*decode.Frame) error { return nil })
	if err == nil || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), "/proc/self/fd") {
		t.Errorf("read past the end: %v, want an error naming %s", err, p)
	}
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("not a video\n"), 0o644)
	n, err := os.Open(notes)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := r.ProbeFile(ctx, n, notes, decode.Options{}, false); err == nil || !strings.Contains(err.Error(), notes) || strings.Contains(err.Error(), "/proc/self/fd") {
		t.Errorf("not a video: %v, want an error naming %s", err, notes)
	}
}
