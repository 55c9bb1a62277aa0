package decode

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestOptionsName: with Options.Name, errors call the video by that name, not by the path opened (a
// caller opening /proc/self/fd/N once had that in every message, a harness loader's included).
func TestOptionsName(t *testing.T) {
	v, err := Open(filepath.Join("..", "testdata", "videos", "video_90.mov"), Options{Name: "shown.mov"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	_, err = v.Read([]int{1 << 20}, func(*Frame) error { return nil })
	var re *RangeError
	if !errors.As(err, &re) || !strings.HasPrefix(err.Error(), "shown.mov: ") {
		t.Errorf("read past the end: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none.mp4"), Options{Name: "named.mp4"}); err == nil || !strings.HasPrefix(err.Error(), "named.mp4: ") {
		t.Errorf("open: %v", err)
	}
}
