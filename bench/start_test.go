package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// TestStartScript runs bench/start/run.sh (the start-cost comparison against ffprobe -version) on two
// small system binaries for one round: it must print a median and a ratio per binary and command, and
// refuse a binary whose shared libraries do not resolve rather than time the loader failing.
func TestStartScript(t *testing.T) {
	testenv.Need(t, "ffprobe")
	testenv.Need(t, "ldd")
	tru := testenv.Need(t, "true")
	out, err := exec.Command("bash", "start/run.sh", "--reps", "1", "--bin", tru, "--bin", "/bin/echo", "help", "x y").CombinedOutput()
	if err != nil {
		t.Fatalf("run.sh: %v\n%s", err, out)
	}
	line := regexp.MustCompile(`^(\S+) (help|x y) +([0-9.]+) s +ffprobe -version ([0-9.]+) s +ratio ([0-9.]+)$`)
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unexpected line %q in\n%s", l, out)
		}
		ff, _ := strconv.ParseFloat(m[4], 64)
		if ff <= 0 {
			t.Errorf("ffprobe's CPU time is %s in %q", m[4], l)
		}
		n++
	}
	if n != 4 {
		t.Fatalf("%d result lines, want 4 (2 binaries × 2 commands):\n%s", n, out)
	}
	if !strings.Contains(string(out), "load average") || !strings.Contains(string(out), "shared libraries") {
		t.Errorf("no load average or library count in\n%s", out)
	}

	// A binary whose shared library is gone: refused in one line.
	dir := t.TempDir()
	bad := filepath.Join(dir, "needs-missing-lib")
	src := filepath.Join(dir, "m.c")
	if err := os.WriteFile(src, []byte("int missing_fn(void); int main(void){return missing_fn();}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lib, libSrc := filepath.Join(dir, "libmissingxyz.so"), filepath.Join(dir, "l.c")
	if err := os.WriteFile(libSrc, []byte("int missing_fn(void){return 0;}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cc, err := exec.LookPath("cc"); err != nil {
		t.Logf("no C compiler: the refusal is not checked")
		return
	} else if o, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, libSrc, "-Wl,-soname,libmissingxyz.so").CombinedOutput(); err != nil {
		t.Logf("cc: %v %s: the refusal is not checked", err, o)
		return
	} else if o, err := exec.Command(cc, "-o", bad, src, "-L"+dir, "-lmissingxyz").CombinedOutput(); err != nil {
		t.Fatalf("cc: %v %s", err, o)
	}
	_ = os.Remove(lib)
	out, err = exec.Command("bash", "start/run.sh", "--reps", "1", "--bin", bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not found") {
		t.Fatalf("a binary with a missing library: err %v\n%s", err, out)
	}
}
