package llamacpp

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// TestRunpath: the binary's only run path is relative to the executable (DT_RUNPATH, searched after
// LD_LIBRARY_PATH), so a copied binary never loads the build checkout's libraries.
func TestRunpath(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runpath, _ := f.DynString(elf.DT_RUNPATH)
	rpath, _ := f.DynString(elf.DT_RPATH)
	if !slices.Equal(runpath, []string{"$ORIGIN/../third_party/llama/lib"}) || len(rpath) != 0 {
		t.Errorf("DT_RUNPATH %q, DT_RPATH %q; want only $ORIGIN/../third_party/llama/lib as DT_RUNPATH", runpath, rpath)
	}
}

// envReport asks this test binary, run again, to print what it loaded (TestReportLibraries).
const envReport = "FRAMESWEEP_TEST_REPORT_LIBRARIES"

// TestReportLibraries prints, when envReport is set, the libraries this process loaded: LibDir, the
// backends, what was skipped, the CUDA build that would load.
func TestReportLibraries(t *testing.T) {
	if os.Getenv(envReport) == "" {
		t.Skip("run by TestLibrariesFromTheInstall")
	}
	bs, err := Backends()
	rep := map[string]any{"lib_dir": LibDir(), "backends": bs, "skipped": Skipped(), "cuda": ResolveCUDA(0).String()}
	if err != nil {
		rep["error"] = err.Error()
	}
	b, _ := json.Marshal(rep)
	os.Stdout.Write(append([]byte("REPORT "), append(b, '\n')...))
}

// TestLibrariesFromTheInstall: this test binary copied into an install layout of its own
// (ROOT/bin, ROOT/third_party/llama/lib with the release's libraries, a truncated
// libggml-cpu-ivybridge.so among them, ROOT/third_party/llama/cuda with the stand-in CUDA builds) and
// run without LD_LIBRARY_PATH loads ROOT's libraries, skips the damaged CPU backend with a line (a
// SIGBUS in dlopen before), loads the same CPU backend as here, and names the CUDA 12 build for a
// host with the CUDA 12 runtime in a Python environment.
func TestLibrariesFromTheInstall(t *testing.T) {
	si := standIns(t)
	here, err := Backends()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	lib := filepath.Join(root, "third_party", "llama", "lib")
	for _, d := range []string{filepath.Join(root, "bin"), lib} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin", "llamacpp.test")
	linkOrCopy(t, exe, bin)
	ents, err := os.ReadDir(LibDir())
	if err != nil {
		t.Fatal(err)
	}
	// The test's own digest list, of the release's files as installed: the install's
	// SHA256SUMS (scripts/deps.sh) exists only where deps ran since it was added, and a truncated
	// library must be refused by its digest wherever a list is.
	writeManifestOf(t, LibDir(), lib)
	for _, e := range ents {
		src := filepath.Join(LibDir(), e.Name())
		if e.Name() == Manifest {
			continue
		}
		if e.Name() == "libggml-cpu-ivybridge.so" {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(lib, e.Name()), b[:len(b)/3], 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.Symlink(src, filepath.Join(lib, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(si, "cuda"), filepath.Join(root, "third_party", "llama", "cuda")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^TestReportLibraries$", "-test.v")
	cmd.Env = append(withoutEnv("LD_LIBRARY_PATH", EnvCUDADir, EnvCUDAPython), envReport+"=1",
		EnvCUDAPython+"="+filepath.Join(si, "host12", "venv"), "LD_LIBRARY_PATH="+filepath.Join(si, "driver12"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	var rep struct {
		LibDir   string           `json:"lib_dir"`
		Backends []Backend        `json:"backends"`
		Skipped  []SkippedLibrary `json:"skipped"`
		CUDA     string           `json:"cuda"`
		Error    string           `json:"error"`
	}
	for _, line := range strings.Split(string(out), "\n") {
		if j, ok := strings.CutPrefix(line, "REPORT "); ok {
			if err := json.Unmarshal([]byte(j), &rep); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rep.LibDir != lib {
		t.Errorf("loaded the libraries of %q, want the install's %q", rep.LibDir, lib)
	}
	if len(rep.Skipped) != 1 || rep.Skipped[0].File != "libggml-cpu-ivybridge.so" || !strings.Contains(rep.Skipped[0].Why, "(damaged or replaced)") {
		t.Errorf("skipped %+v, want the truncated libggml-cpu-ivybridge.so", rep.Skipped)
	}
	if !strings.Contains(string(out), "framesweep: llama.cpp: skipped "+filepath.Join(lib, "libggml-cpu-ivybridge.so")) {
		t.Errorf("no line on stderr for the skipped library:\n%s", out)
	}
	if rep.Error != "" || len(rep.Backends) == 0 || rep.Backends[0] != here[0] {
		t.Errorf("backends %+v (%s), want %+v as here", rep.Backends, rep.Error, here[0])
	}
	if want := "CUDA 12 build " + filepath.Join(root, "third_party", "llama", "cuda", "12", "libggml-cuda.so"); !strings.HasPrefix(rep.CUDA, want) {
		t.Errorf("CUDA choice %q, want %q…", rep.CUDA, want)
	}
}

// withoutEnv is the environment without the named variables.
func withoutEnv(names ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) {
			out = append(out, kv)
		}
	}
	return out
}

// linkOrCopy hard-links src to dst (the loader resolves $ORIGIN through symbolic links, not hard
// ones), copying when they are on different file systems.
func linkOrCopy(t *testing.T, src, dst string) {
	t.Helper()
	if os.Link(src, dst) == nil {
		return
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCPUBackendChecks: with the release's digests (SHA256SUMS, as scripts/deps.sh writes them) a
// CPU backend whose bytes differ, or one the release does not list, is skipped before dlopen, and the
// best of the others is chosen; a truncated one is refused by its ELF extents alone.
func TestCPUBackendChecks(t *testing.T) {
	here, err := Backends()
	if err != nil {
		t.Fatal(err)
	}
	best := here[0].Detail // e.g. libggml-cpu-zen4.so
	dir := t.TempDir()
	paths, err := filepath.Glob(filepath.Join(LibDir(), "libggml-cpu-*.so"))
	if err != nil || len(paths) < 2 {
		t.Fatalf("CPU backends in %s: %v %v", LibDir(), paths, err)
	}
	var sums strings.Builder
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		digest := hex.EncodeToString(sum[:])
		if filepath.Base(p) == best {
			digest = strings.Repeat("0", 64) // the release says other bytes
		}
		fmt.Fprintf(&sums, "%s  %s\n", digest, filepath.Base(p))
		if err := os.Symlink(p, filepath.Join(dir, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	linkOrCopy(t, paths[0], filepath.Join(dir, "libggml-cpu-planted.so"))
	if err := os.WriteFile(filepath.Join(dir, Manifest), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, skipped, err := chooseCPU(dir)
	if err != nil {
		t.Fatal(err)
	}
	why := map[string]string{}
	for _, s := range skipped {
		why[s.File] = s.Why
	}
	if !strings.Contains(why[best], "damaged or replaced") || !strings.Contains(why["libggml-cpu-planted.so"], "not in the release's "+Manifest) || len(skipped) != 2 {
		t.Errorf("skipped %+v", skipped)
	}
	if got == "" || filepath.Base(got) == best {
		t.Errorf("chose %q with %s refused", got, best)
	}
	// A truncated library: refused by its extents, without digests.
	b, _ := os.ReadFile(paths[0])
	trunc := filepath.Join(t.TempDir(), "libggml-cpu-x.so")
	if err := os.WriteFile(trunc, b[:len(b)-4096], 0o644); err != nil {
		t.Fatal(err)
	}
	if why := checkLibrary(trunc, nil, "ggml_backend_score"); why == "" {
		t.Error("a truncated library passed")
	}
	if why := checkLibrary(paths[0], nil, "ggml_backend_score", "ggml_backend_init"); why != "" {
		t.Errorf("a good library refused: %s", why)
	}
}

// TestLdCache: the loader's cache as read here agrees with `ldconfig -p` on every library of this
// machine's kind, and the search finds a system library through it.
func TestLdCache(t *testing.T) {
	ldconfig := ""
	for _, p := range []string{"/sbin/ldconfig", "/usr/sbin/ldconfig"} {
		if _, err := os.Stat(p); err == nil {
			ldconfig = p
		}
	}
	if ldconfig == "" {
		testenv.Missing(t, "no ldconfig to compare with")
	}
	out, err := exec.Command(ldconfig, "-p").Output()
	if err != nil {
		t.Fatal(err)
	}
	got := ldCache(ldCachePath)
	first := map[string]string{} // ldconfig prints the cache in its order: the preferred entry first
	for _, line := range strings.Split(string(out), "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), " (libc6,x86-64")
		if _, seen := first[name]; ok && !seen {
			_, first[name], _ = strings.Cut(rest, "=> ")
		}
	}
	for name, path := range first {
		if got[name] != path {
			t.Errorf("%s: %q as read, ldconfig says %q", name, got[name], path)
		}
	}
	if n := len(first); n == 0 || len(got) != n {
		t.Fatalf("%d entries as read, %d from ldconfig:\n%.300s", len(got), n, out)
	}
	if p := newLibSearch(nil).find("libc.so.6", nil); p == "" {
		t.Error("libc.so.6 not found")
	}
}

// writeManifestOf writes into dst a SHA256SUMS of src's regular .so files, as scripts/deps.sh does.
func writeManifestOf(t *testing.T, src, dst string) {
	t.Helper()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".so") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%x  %s\n", sha256.Sum256(data), e.Name())
	}
	if err := os.WriteFile(filepath.Join(dst, Manifest), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
