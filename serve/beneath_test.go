package serve

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenBeneath: every way a name can lead out of a root is refused, under openat2 and under the
// walk that replaces it, and what stays inside opens the file it names (the kernel's name of the
// opened file is the one checked and reported).
func TestOpenBeneath(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, "a.mp4"), []byte("inside"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "b.mp4"), []byte("outside"), 0o644))
	must(os.MkdirAll(filepath.Join(root, "d", "e"), 0o755))
	for link, target := range map[string]string{
		"rel.mp4":      "a.mp4",
		"d/up.mp4":     "../a.mp4",
		"d/e/chain":    "../up.mp4",
		"abs.mp4":      filepath.Join(root, "a.mp4"),
		"d/absdir":     filepath.Join(root, "d"),
		"out.mp4":      filepath.Join(outside, "b.mp4"),
		"outrel.mp4":   "../" + filepath.Base(outside) + "/b.mp4",
		"d/e/deep":     "../../../" + filepath.Base(outside) + "/b.mp4",
		"outdir":       outside,
		"magic":        "/proc/self/root" + outside,
		"procfd":       "/proc/self/fd",
		"loop1":        "loop2",
		"loop2":        "loop1",
		"d/up":         "..",
		"dangling.mp4": filepath.Join(root, "nowhere.mp4"),
	} {
		must(os.Symlink(target, filepath.Join(root, link)))
	}
	must(syscall.Mkfifo(filepath.Join(root, "fifo.mp4"), 0o644))
	rs, err := newRoots([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		status int // 200: opened a.mp4
	}{
		{"a.mp4", 200}, {"rel.mp4", 200}, {"d/up.mp4", 200}, {"d/e/chain", 200}, {"abs.mp4", 200}, {"d/absdir/up.mp4", 200},
		{"d/up/a.mp4", 200}, {"d/up/d/up/abs.mp4", 200}, {filepath.Join(root, "d/up.mp4"), 200}, {"a.mp4/", 200},
		{"out.mp4", 403}, {"outrel.mp4", 403}, {"d/e/deep", 403}, {"outdir/b.mp4", 403}, {"magic/b.mp4", 403},
		{"procfd/0", 403}, {"loop1", 403}, {"d/up/..", 403}, {"fifo.mp4", 403}, {"d", 403}, {".", 403},
		{"dangling.mp4", 404}, {"missing.mp4", 404}, {"a.mp4/x", 404}, {"d/nothing/x", 404},
	}
	for _, openat2 := range []bool{true, false} {
		useOpenat2 = openat2
		for _, c := range cases {
			v, err := rs.open(c.name)
			status := 200
			if err != nil {
				status = asError(err).Status
				if strings.Contains(err.Error(), outside) {
					t.Errorf("openat2 %t, %q: the error names the outside path: %v", openat2, c.name, err)
				}
			} else {
				b := make([]byte, 16)
				n, _ := v.f.ReadAt(b, 0)
				if string(b[:n]) != "inside" || v.path != filepath.Join(rs[0].real, "a.mp4") {
					t.Errorf("openat2 %t, %q: opened %q at %s", openat2, c.name, b[:n], v.path)
				}
				v.Close()
			}
			if status != c.status {
				t.Errorf("openat2 %t, %q: status %d, want %d (%v)", openat2, c.name, status, c.status, err)
			}
		}
	}
	useOpenat2 = true
}
