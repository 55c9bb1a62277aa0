package extract

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/rgb"
)

func mkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestOutDirLinkedSubdir: a subdirectory of --out that is a link out of it (a loader's resized/) is
// never written into, --force or not (the rest of the confinement: cmd's TestFramesOutConfined).
func TestOutDirLinkedSubdir(t *testing.T) {
	tmp := t.TempDir()
	d2 := filepath.Join(tmp, "out2")
	mkdir(t, d2)
	away := filepath.Join(tmp, "away")
	mkdir(t, away)
	if err := os.Symlink(away, filepath.Join(d2, "resized")); err != nil {
		t.Fatal(err)
	}
	od, err := openOut(d2)
	if err != nil {
		t.Fatal(err)
	}
	defer od.Close()
	if err := od.claim([]string{"000000.png", "resized/000000.png"}, false); err == nil || !strings.Contains(err.Error(), "resized") {
		t.Fatalf("claim of a DIR whose resized/ is a link: %v", err)
	}
	if err := od.claim([]string{"000000.png", "resized/000000.png"}, true); err != nil {
		t.Fatal(err)
	}
	img := &rgb.Image{W: 2, H: 2, Stride: 6, Pix: make([]byte, 12)}
	if err := od.mkdir("resized"); err == nil {
		t.Fatal("mkdir accepted a link out of DIR")
	}
	if _, err := od.writePNG("resized/000000.png", img); err == nil {
		t.Fatal("a PNG was written through a link out of DIR")
	}
	if ents, _ := os.ReadDir(away); len(ents) != 0 {
		t.Fatalf("written outside DIR: %v", ents)
	}
}
