package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzDecodeRequest: the request decoder never panics, refuses with a 400 only, and a request it
// accepts names one configuration that survives a round trip through JSON unchanged. The seed
// corpus is testdata/fuzz/FuzzDecodeRequest.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"video":"a.mp4","policy":"uniform","frames":8}`,
		`{"video":"a.mp4","preset":"qwen2.5-vl","sample_fps":2,"resolution":"qwen2.5-vl","dtype":"f16","norm":"imagenet"}`,
		`{"video":"a.mp4","policy":"random","frames":4,"seed":18446744073709551615,"pipeline":"cached","stream":0,"on_damaged":"keep"}`,
		`{"video":"a.mp4","preset":"lmms-eval","frames":8,"force_last":true,"torch":"1.13-avx2","format":"npy"}`,
		`{"video":"","policy":"uniform"}`, `null`, `[]`, `{"video":1}`, `{"frames":8.5}`, `{} {}`, "\xff\xfe{",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeRequest(body)
		if err != nil {
			if e := asError(err); e.Status != http.StatusBadRequest || e.Code != CodeBadRequest {
				t.Fatalf("decode error %+v", e)
			}
			return
		}
		sp, err := r.spec()
		if err != nil {
			if e := asError(err); e.Status != http.StatusBadRequest {
				t.Fatalf("spec error %+v", e)
			}
			return
		}
		if sp.config.ID == "" || (sp.config.Preset == "") == (sp.config.Policy == "") {
			t.Fatalf("accepted %q as config %+v", body, sp.config)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := DecodeRequest(b)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", b, err)
		}
		sp2, err := r2.spec()
		if err != nil || sp2.config.ID != sp.config.ID || !reflect.DeepEqual(sp2.opts, sp.opts) || !reflect.DeepEqual(*r2, *r) {
			t.Fatalf("round trip of %s: %v, %s vs %s", b, err, sp2.config.ID, sp.config.ID)
		}
	})
}

// FuzzResolve: whatever name a request sends, opening it either refuses it (400/403/404) or opens a
// regular file inside the root, after every symlink, and names it by where it is.
func FuzzResolve(f *testing.F) {
	root, outside := f.TempDir(), f.TempDir()
	os.WriteFile(filepath.Join(root, "a.mp4"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(outside, "b.mp4"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(root, "d"), 0o755)
	os.Symlink("../a.mp4", filepath.Join(root, "d", "in.mp4"))
	os.Symlink(filepath.Join(outside, "b.mp4"), filepath.Join(root, "out.mp4"))
	os.Symlink(outside, filepath.Join(root, "od"))
	os.Symlink("..", filepath.Join(root, "d", "up"))
	os.Symlink(filepath.Join(root, "a.mp4"), filepath.Join(root, "abs.mp4"))
	os.Symlink("/proc/self/root"+outside, filepath.Join(root, "magic"))
	rs, err := newRoots([]string{root})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"a.mp4", "d/in.mp4", "out.mp4", "od/b.mp4", "d/up/a.mp4", "d/up/../x", "../a.mp4", "/etc/passwd",
		filepath.Join(root, "a.mp4"), "file:a.mp4", "./d//in.mp4", "d", "a.mp4/", "", "abs.mp4", "magic/b.mp4", "d/up/d/up/abs.mp4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		for _, openat2 := range []bool{true, false} {
			useOpenat2 = openat2
			v, err := rs.open(name)
			useOpenat2 = true
			if err != nil {
				switch e := asError(err); e.Status {
				case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound:
				default:
					t.Fatalf("%q: %+v", name, e)
				}
				continue
			}
			p := v.path
			real, err := filepath.EvalSymlinks(p)
			st, serr := os.Stat(p)
			fst, ferr := v.f.Stat()
			v.Close()
			if err != nil || real != p || !within(p, rs[0].real) || serr != nil || !st.Mode().IsRegular() || ferr != nil || !os.SameFile(st, fst) {
				t.Fatalf("%q (openat2 %t) opened %q (real %q, %v): not a regular file inside %s", name, openat2, p, real, err, rs[0].real)
			}
		}
	})
}
