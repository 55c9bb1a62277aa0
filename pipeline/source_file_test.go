package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/loader/load"
)

// TestOpenFile: a ref with a File is hashed and decoded through that descriptor only. The file at the
// path is replaced by another video after it was opened (and the caller's descriptor closed before
// the frames are read): the digest, the description and the frames are still the opened file's, named
// by the ref's path; errors name the path, not /proc/self/fd; a FIFO is refused without blocking.
func TestOpenFile(t *testing.T) {
	ctx := context.Background()
	orig := testVideo(t, "nasa_13013.mp4")
	want, err := cache.FileSHA256(orig)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "v.mp4")
	copyFile(t, orig, p)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.mp4")
	copyFile(t, testVideo(t, "video_90.mov"), other)
	if err := os.Rename(other, p); err != nil { // the name now leads to another video
		t.Fatal(err)
	}
	v, src, err := OpenVideo(ctx, VideoRef{Path: p, File: f}, Options{})
	f.Close() // the Source holds its own descriptor
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if v.SHA256 != want || v.Info.Frames != 390 || v.Info.Path != p || src.Info().Path != p || v.Path != p {
		t.Fatalf("opened %q: sha %s (want %s), %d frames, Info.Path %q", p, v.SHA256, want, v.Info.Frames, v.Info.Path)
	}
	ref, err := decode.Open(orig, decode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	idx := []int{0, 200, 389}
	var got, exp [][]byte
	if _, err := src.Read(idx, func(fr *decode.Frame) error { got = append(got, bytes.Clone(fr.Packed())); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Read(idx, func(fr *decode.Frame) error { exp = append(exp, bytes.Clone(fr.Packed())); return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range idx {
		if i >= len(got) || !bytes.Equal(got[i], exp[i]) {
			t.Fatalf("frame %d: not the opened file's frame", idx[i])
		}
	}
	_, err = src.Read([]int{390}, func(*decode.Frame) error { return nil })
	if err == nil || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), "/proc/self/fd") {
		t.Errorf("a read error names %v, want %s", err, p)
	}
	// The description the ref carries is checked against the opened file, not the name.
	g, err := os.Open(p) // now video_90
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, _, err := OpenSource(ctx, VideoRef{Path: p, File: g, Info: &v.Info}, Options{}); err == nil {
		t.Error("another file's description was taken")
	}

	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("not a video\n"), 0o644)
	n, err := os.Open(notes)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, _, err := OpenSource(ctx, VideoRef{Path: notes, File: n}, Options{}); err == nil || !strings.Contains(err.Error(), notes) || strings.Contains(err.Error(), "/proc/self/fd") {
		t.Errorf("not a video: %v, want an error naming %s", err, notes)
	}
	fifo := filepath.Join(dir, "fifo.mp4")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ff, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ff.Close()
	if _, _, err := OpenVideo(ctx, VideoRef{Path: fifo, File: ff}, Options{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO: %v", err)
	}
}

// TestRunLoaderFile: a harness loader's reader opens the video again for its own pass; given the
// descriptor (VideoRef.File, Video.File: how serve hands it on), it reads the opened file, never what
// the name leads to now. Without it the replaced name would give video_90.mov's frames.
func TestRunLoaderFile(t *testing.T) {
	ctx := context.Background()
	orig := testVideo(t, "nasa_13013.mp4")
	dir := t.TempDir()
	p := filepath.Join(dir, "v.mp4")
	copyFile(t, orig, p)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	other := filepath.Join(dir, "other.mp4")
	copyFile(t, testVideo(t, "video_90.mov"), other)
	if err := os.Rename(other, p); err != nil {
		t.Fatal(err)
	}
	reqs := []loader.Request{{Frames: 3}}
	want, _, err := RunLoader(ctx, VideoRef{Path: orig}, loader.LmmsEval, reqs, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, errs, err := RunLoader(ctx, VideoRef{Path: p, File: f}, loader.LmmsEval, reqs, load.Options{})
	if err != nil || errors.Join(errs...) != nil {
		t.Fatal(err, errs)
	}
	if got[0].Count != want[0].Count || len(got[0].Frames) != 3 {
		t.Fatalf("count %d (want the opened file's %d), %d frames", got[0].Count, want[0].Count, len(got[0].Frames))
	}
	for i := range got[0].Frames {
		if !bytes.Equal(got[0].Frames[i].Image.Packed(), want[0].Frames[i].Image.Packed()) {
			t.Fatalf("frame %d is not the opened file's", i)
		}
	}
	// The planner and the pass read it the same way (Video.File).
	v, src, err := OpenVideo(ctx, VideoRef{Path: p, File: f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	v.File = f
	jobs, fails, err := PlanJobsContext(ctx, v, testGrid(t, "loader: lmms-eval\nframes: [3]\n").Configs, Options{})
	if err != nil || len(fails) > 0 || len(jobs) != 1 {
		t.Fatalf("plan: %v %v %d jobs", err, fails, len(jobs))
	}
	if jobs[0].Loader.Plan.Count != want[0].Count {
		t.Fatalf("planned on %d frames, the opened file has %d", jobs[0].Loader.Plan.Count, want[0].Count)
	}
}
