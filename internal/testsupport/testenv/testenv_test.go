package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingFailsUnderCI runs a test that calls Missing in a child process, with and without CI=true.
func TestMissingFailsUnderCI(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		Missing(t, "nothing here")
		return
	}
	for _, ci := range []string{"", "true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingFailsUnderCI$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		failed := err != nil
		if failed != (ci == "true") || !strings.Contains(string(out), "oracle missing: nothing here") {
			t.Errorf("CI=%q: failed=%v\n%s", ci, failed, out)
		}
	}
}

// TestNeedSkipsOnLaptop: each Need* ends the test through Missing (a skip without CI) when its oracle
// is absent, and returns what it found when present.
func TestNeedSkipsOnLaptop(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("TESTENV_EMPTY", "")
	for name, need := range map[string]func(testing.TB){
		"Need":        func(tb testing.TB) { Need(tb, "framesweep-no-such-tool") },
		"NeedFile":    func(tb testing.TB) { NeedFile(tb, "/no/such/file") },
		"NeedEnv":     func(tb testing.TB) { NeedEnv(tb, "TESTENV_EMPTY") },
		"NeedPython":  func(tb testing.TB) { NeedPython(tb, "framesweep_no_such_module") },
		"SharedVideo": func(tb testing.TB) { SharedVideo(tb, "no-such-dir/no-such-video.mp4") },
	} {
		var sub *testing.T
		t.Run(name, func(t *testing.T) {
			sub = t
			need(t)
			t.Error("the missing oracle did not end the test")
		})
		if !sub.Skipped() {
			t.Errorf("%s: not skipped", name)
		}
	}
	if p := Need(t, "sh"); !strings.HasSuffix(p, "/sh") {
		t.Errorf("Need(sh) = %q", p)
	}
	t.Setenv("TESTENV_SET", "x")
	if v := NeedEnv(t, "TESTENV_SET"); v[0] != "x" {
		t.Errorf("NeedEnv = %v", v)
	}
}

// TestSharedVideos: the shared videos are found from any package (the path does not depend on the
// working directory), beside the repository root.
func TestSharedVideos(t *testing.T) {
	dir := SharedVideos(t)
	if !filepath.IsAbs(dir) && !strings.HasPrefix(dir, "/") {
		abs, err := filepath.Abs(dir)
		if err != nil {
			t.Fatal(err)
		}
		dir = abs
	}
	wd, _ := os.Getwd()
	root := filepath.Dir(filepath.Dir(filepath.Dir(wd))) // this package is internal/testsupport/testenv
	if want, _ := filepath.Abs(filepath.Join(root, "..", "shared", "testdata", "videos")); filepath.Clean(dir) != want {
		t.Errorf("SharedVideos = %s, want %s", dir, want)
	}
	if p := SharedVideo(t, "torchcodec/nasa_13013.mp4"); !strings.HasPrefix(p, SharedVideos(t)) {
		t.Errorf("SharedVideo = %s", p)
	}
}
