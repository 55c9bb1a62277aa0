package cache

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/framesweep/framesweep/rgb"
)

func testSpec(i int) KeySpec {
	return KeySpec{
		VideoSHA256: strings.Repeat("ab", 32), Engine: "test", Indices: []int{0, i}, Geometry: "fixed:4x2",
		Kernel: "bilinear", Pipeline: PipelineRaw, DType: U8, Norm: "none", Layout: "NHWC", Libraries: "test",
	}
}

func testObject(t testing.TB, seed byte) []byte {
	t.Helper()
	frames := Tensor{Name: "frames", DType: U8, Shape: []int{2, 2, 4, 3}}
	for f := 0; f < 2; f++ {
		img := rgb.New(4, 2)
		for i := range img.Pix {
			img.Pix[i] = seed + byte(i*7+f)
		}
		frames.Data = append(frames.Data, img.Pix...)
	}
	b, err := EncodeSafetensors([]Tensor{frames, Int64Tensor("indices", []int{0, 1})}, map[string]string{"seed": string('a' + seed)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKeySpec(t *testing.T) {
	a, b := testSpec(1), testSpec(1)
	if a.Key() != b.Key() || len(a.Key()) != 64 {
		t.Fatal("equal specs, different keys")
	}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	// Every field that determines the bytes changes the key.
	mut := []func(*KeySpec){
		func(k *KeySpec) { k.VideoSHA256 = strings.Repeat("cd", 32) },
		func(k *KeySpec) { k.Indices = []int{0, 2} },
		func(k *KeySpec) { k.Geometry = "fixed:4x3" },
		func(k *KeySpec) { k.Kernel = "bicubic" },
		func(k *KeySpec) { k.Pipeline = PipelineCached },
		func(k *KeySpec) { k.Norm = "clip" },
		func(k *KeySpec) { k.DType = F32 },
		func(k *KeySpec) { k.Engine = "test2" },
		func(k *KeySpec) { k.JPEGQuality = 75 },
		func(k *KeySpec) { k.Autorotate = true },
		func(k *KeySpec) { k.Libraries = "libavcodec 60.31.102, libswscale 7.5.100" }, // another FFmpeg
	}
	seen := map[string]bool{a.Key(): true}
	for i, m := range mut {
		k := testSpec(1)
		m(&k)
		if seen[k.Key()] {
			t.Errorf("mutation %d does not change the key", i)
		}
		seen[k.Key()] = true
	}
	bad := testSpec(1)
	bad.Indices = nil
	if !errors.Is(bad.Validate(), ErrBadSpec) {
		t.Error("spec without indices validated")
	}
}

func TestStorePutGetVerify(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := testSpec(1).Key()
	if _, ok, err := s.Has(ctx, key); ok || err != nil {
		t.Fatalf("empty store Has = %v, %v", ok, err)
	}
	obj := testObject(t, 1)
	ref, err := s.Put(ctx, key, obj)
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := s.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if f.Tensors["frames"].Shape[0] != 2 || f.Metadata["seed"] != "b" {
		t.Fatalf("loaded %v %v", f.Tensors["frames"].Shape, f.Metadata)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.Clean() || rep.OK != 1 {
		t.Fatalf("verify clean store: %+v %v", rep, err)
	}
	path := filepath.Join(dir, filepath.FromSlash(ObjectName(ref.Digest)))

	damage := map[string]func([]byte) []byte{
		"flip header byte": func(b []byte) []byte { b[20] ^= 1; return b },
		"flip data byte":   func(b []byte) []byte { b[len(b)-3] ^= 0x80; return b },
		"truncate":         func(b []byte) []byte { return b[:len(b)-5] },
		"empty":            func(b []byte) []byte { return nil },
	}
	for name, d := range damage {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, d(append([]byte(nil), obj...)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := s.Load(ctx, key)
			var ce *Error
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Path != path {
				t.Fatalf("read of damaged object: %v", err)
			}
			if _, ok, _ := s.Has(ctx, key); ok {
				t.Fatal("Has accepts a damaged object")
			}
			rep, err := s.Verify(ctx)
			if err != nil || rep.Clean() || rep.Problems[0].Kind != "corrupt" {
				t.Fatalf("verify: %+v %v", rep, err)
			}
			// Rewriting repairs it.
			if _, err := s.Put(ctx, key, obj); err != nil {
				t.Fatal(err)
			}
			if rep, _ := s.Verify(ctx); !rep.Clean() {
				t.Fatalf("after repair: %+v", rep)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		os.Remove(path)
		if _, _, err := s.Load(ctx, key); !errors.Is(err, ErrNotFound) {
			t.Fatalf("load: %v", err)
		}
		rep, _ := s.Verify(ctx)
		if len(rep.Problems) != 1 || rep.Problems[0].Kind != "missing" || rep.Problems[0].Key != key {
			t.Fatalf("verify: %+v", rep)
		}
	})
}

func TestStoreConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, dir) // separate handles, as separate processes would have
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := 0; i < 5; i++ {
				if _, err := s.Put(ctx, testSpec(i).Key(), testObject(t, byte(i))); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s, _ := Open(ctx, dir)
	rep, err := s.Verify(ctx)
	if err != nil || !rep.Clean() || rep.OK != 5 || rep.Objects != 5 || len(rep.InFlight) != 0 {
		t.Fatalf("%+v %v", rep, err)
	}
}

func TestStoreBlobURL(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, "file://"+dir+"?no_tmp_dir=1&metadata=skip")
	if err != nil {
		t.Fatal(err)
	}
	key := testSpec(3).Key()
	ref, err := s.Put(ctx, key, testObject(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Load(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	// The same bytes are readable as a plain directory store.
	d, _ := Open(ctx, dir)
	rep, err := d.Verify(ctx)
	if err != nil || !rep.Clean() || rep.OK != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(ObjectName(ref.Digest)))); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, "nosuchscheme://bucket"); err == nil {
		t.Fatal("unknown scheme accepted")
	}
}

func TestStorePutParts(t *testing.T) {
	ctx := context.Background()
	s, _ := Open(ctx, t.TempDir())
	obj := testObject(t, 7)
	a, err := s.Put(ctx, testSpec(7).Key(), obj)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := SafetensorsParts([]Tensor{Int64Tensor("x", []int{1, 2})}, map[string]string{"k": "v"})
	if err != nil || len(parts) != 2 {
		t.Fatalf("%v %d", err, len(parts))
	}
	whole, _ := EncodeSafetensors([]Tensor{Int64Tensor("x", []int{1, 2})}, map[string]string{"k": "v"})
	if !bytes.Equal(append(append([]byte(nil), parts[0]...), parts[1]...), whole) {
		t.Fatal("parts do not concatenate to the encoding")
	}
	// Put of the object in three arbitrary pieces gives the same ref and bytes.
	b, err := s.PutParts(ctx, testSpec(8).Key(), [][]byte{obj[:5], obj[5:17], obj[17:]})
	if err != nil || b.Digest != a.Digest || b.Size != a.Size {
		t.Fatalf("%+v vs %+v: %v", b, a, err)
	}
	if got, _, err := s.Get(ctx, testSpec(8).Key()); err != nil || !bytes.Equal(got, obj) {
		t.Fatalf("get: %v", err)
	}
}

func TestFileImages(t *testing.T) {
	f, err := ParseSafetensors(testObject(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := f.Images("frames")
	if err != nil || len(imgs) != 2 || imgs[1].W != 4 || imgs[1].H != 2 {
		t.Fatalf("%v %d", err, len(imgs))
	}
	if imgs[1].Pix[0] != 3+1 || imgs[0].Pix[23] != 3+byte(23*7) {
		t.Fatalf("pixels %v %v", imgs[1].Pix[:3], imgs[0].Pix[21:])
	}
	if _, err := f.Images("indices"); !errors.Is(err, ErrBadSpec) {
		t.Fatalf("indices as images: %v", err)
	}
	if _, err := f.Images("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing tensor: %v", err)
	}
}

func TestMissingDirs(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "cas", "sha256", "ab")
	if got := missingDirs(root, a); len(got) != 3 || got[0] != a || got[2] != filepath.Join(root, "cas") {
		t.Fatalf("fresh store: %v", got)
	}
	if err := os.MkdirAll(filepath.Join(root, "cas", "sha256"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := missingDirs(root, a); len(got) != 1 || got[0] != a {
		t.Fatalf("existing parents: %v", got)
	}
	if got := missingDirs(root, root); len(got) != 0 {
		t.Fatalf("root: %v", got)
	}
}

func TestMissingDirsRelativeRoot(t *testing.T) {
	t.Chdir(t.TempDir())
	if got := missingDirs(".", filepath.Join("cas", "sha256")); len(got) != 2 || got[1] != "cas" {
		t.Fatalf("root \".\": %v", got)
	}
}
