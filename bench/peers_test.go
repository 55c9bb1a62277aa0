package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// npyBytes writes what numpy.save writes for a C-order uint8 array (format 1.0).
func npyBytes(shape []int, data []byte) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	hdr := fmt.Sprintf("{'descr': '|u1', 'fortran_order': False, 'shape': (%s), }", tuple)
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), binary.LittleEndian.AppendUint16(nil, uint16(len(hdr)))...)
	return append(append(b, hdr...), data...)
}

func TestParseNPY(t *testing.T) {
	t.Parallel()
	data := []byte{1, 2, 3, 4, 5, 6}
	shape, got, err := parseNPY(npyBytes([]int{1, 2, 1, 3}, data))
	if err != nil || fmt.Sprint(shape) != "[1 2 1 3]" || !bytes.Equal(got, data) {
		t.Fatalf("parseNPY: %v %v %v", shape, got, err)
	}
	for name, b := range map[string][]byte{
		"no magic":  []byte("NUMPY\x01\x00\x00\x00"),
		"short":     npyBytes([]int{2, 4}, data),
		"float":     bytes.Replace(npyBytes([]int{6}, data), []byte("|u1"), []byte("<f4"), 1),
		"fortran":   bytes.Replace(npyBytes([]int{6}, data), []byte("False"), []byte("True "), 1),
		"version 9": append([]byte("\x93NUMPY\x09\x00"), npyBytes([]int{6}, data)[8:]...),
	} {
		if _, _, err := parseNPY(b); !errors.Is(err, ErrNPY) {
			t.Errorf("%s: err %v, want ErrNPY", name, err)
		}
	}
	// The real writer (Debian's numpy, an oracle: missing, it fails under CI): the same reader takes
	// np.save's output. A subtest, so the hand-built files above count on a laptop without it.
	t.Run("np.save", func(t *testing.T) {
		py := testenv.NeedPython(t, "numpy")
		p := filepath.Join(t.TempDir(), "a.npy")
		if out, err := exec.Command(py, "-c", "import numpy as np, sys; np.save(sys.argv[1], np.arange(24, dtype=np.uint8).reshape(2, 3, 4))", p).CombinedOutput(); err != nil {
			t.Fatalf("np.save: %v: %s", err, out)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		shape, got, err := parseNPY(b)
		if err != nil || fmt.Sprint(shape) != "[2 3 4]" || got[23] != 23 {
			t.Errorf("np.save file: %v %v %v", shape, err, got)
		}
	})
}

func TestPSNRBytes(t *testing.T) {
	t.Parallel()
	a := []byte{10, 20, 30, 40}
	if p := psnrBytes(a, a); p != PSNRIdentical {
		t.Errorf("identical: %v", p)
	}
	b := []byte{11, 20, 30, 40} // MSE 1/4 → 10·log10(255²·4) = 54.15 dB
	if p := psnrBytes(a, b); p < 54.1 || p > 54.2 {
		t.Errorf("one LSB in four samples: %.3f dB", p)
	}
	if p := psnrBytes(a, b[:3]); p != 0 {
		t.Errorf("length mismatch: %v", p)
	}
}

// writeObject writes a safetensors object like extract's (frames + layout metadata) and returns its path.
func writeObject(t *testing.T, dir string, shape []int, frames []byte, layout string) string {
	t.Helper()
	b, err := cache.EncodeSafetensors([]cache.Tensor{{Name: "frames", DType: cache.U8, Shape: shape, Data: frames}},
		map[string]string{"layout": layout})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, fmt.Sprintf("obj-%d", len(frames)))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestComparePeer: a peer that serves the plan's frames compares identical; one differing frame lowers
// the minimum PSNR and is named; served indices that differ from the plan are reported.
func TestComparePeer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const w, h = 4, 2
	fb := w * h * 3
	ref := make([]byte, 3*fb)
	for i := range ref {
		ref[i] = byte(i * 7)
	}
	obj := writeObject(t, dir, []int{3, h, w, 3}, ref, `{"src":{"w":8,"h":4},"resize":{"w":4,"h":2},"token_frames":1}`)
	cfgs := []peerConfig{{ID: "f3", Indices: []int{0, 5, 9}, Width: w, Height: h, object: obj}}
	out := &peerOutput{}
	out.Configs = append(out.Configs, struct {
		ID     string `json:"id"`
		Served []int  `json:"served"`
		Shape  []int  `json:"shape"`
	}{ID: "f3", Served: []int{0, 5, 9}, Shape: []int{3, h, w, 3}})

	dump := t.TempDir()
	peer := append([]byte(nil), ref...)
	if err := os.WriteFile(filepath.Join(dump, "000.npy"), npyBytes([]int{3, h, w, 3}, peer), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := comparePeer(cfgs, out, dump)
	if err != nil || !c.indicesOK || c.identical != 3 || c.frames != 3 || c.minPSNR != PSNRIdentical || c.worst != "" {
		t.Fatalf("identical peer: %+v %v", c, err)
	}

	peer[fb+1] ^= 0x40 // frame 5 differs in one sample
	_ = os.WriteFile(filepath.Join(dump, "000.npy"), npyBytes([]int{3, h, w, 3}, peer), 0o644)
	out.Configs[0].Served = []int{0, 6, 9}
	c, err = comparePeer(cfgs, out, dump)
	if err != nil || c.indicesOK || c.identical != 2 || c.minPSNR >= 40 || !strings.Contains(c.worst, "frame 5") ||
		!strings.Contains(c.mismatch, "[0 6 9]") {
		t.Fatalf("differing peer: %+v %v", c, err)
	}

	_ = os.WriteFile(filepath.Join(dump, "000.npy"), npyBytes([]int{3, w, h, 3}, peer), 0o644)
	if _, err := comparePeer(cfgs, out, dump); err == nil || !strings.Contains(err.Error(), "framesweep's") {
		t.Errorf("transposed size: %v", err)
	}
}

func TestCheckPlainResize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fr := make([]byte, 2*2*3)
	plain := writeObject(t, dir, []int{1, 2, 2, 3}, fr, `{"src":{"w":8,"h":8},"resize":{"w":2,"h":2},"token_frames":1}`)
	if err := checkPlainResize(plain, 2, 2); err != nil {
		t.Errorf("plain resize refused: %v", err)
	}
	if err := checkPlainResize(plain, 2, 3); err == nil {
		t.Error("wrong size accepted")
	}
	crop := writeObject(t, dir, []int{1, 2, 2, 3}, append(fr, fr...)[:12], `{"src":{"w":8,"h":8},"resize":{"w":4,"h":4},"crop":{"x":1,"y":1,"w":2,"h":2},"token_frames":1}`)
	if err := checkPlainResize(crop, 2, 2); err == nil || !strings.Contains(err.Error(), "plain resize") {
		t.Errorf("crop accepted: %v", err)
	}
}

// TestReadPeerManifestLines: the manifest's lines go through record.ReadLine: a blank line is no
// line, a plain-resize object is read with its config, a config seen before is not read twice, and a
// line that does not decode is an error naming file:line, never skipped.
func TestReadPeerManifestLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	obj := writeObject(t, dir, []int{1, 2, 2, 3}, make([]byte, 12), `{"src":{"w":8,"h":8},"resize":{"w":2,"h":2},"token_frames":1}`)
	line := fmt.Sprintf(`{"object":%q,"config":"c1","shape":[1,2,2,3],"indices":[0]}`, obj)
	m := filepath.Join(dir, "m.jsonl")
	if err := os.WriteFile(m, []byte(line+"\n\n"+line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := readPeerManifest(m); err != nil || len(got) != 1 || got[0].ID != "c1" || got[0].Width != 2 {
		t.Errorf("a manifest of one config: %+v, %v", got, err)
	}
	if err := os.WriteFile(m, []byte(line+"\n\n{\"object\":\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readPeerManifest(m); err == nil || !strings.Contains(err.Error(), "m.jsonl:3") {
		t.Errorf("an undecodable line: %v", err)
	}
}

// TestRunProcess: the cost of a real child and the one-line error of a failing one. The peak RSS is
// the child's own even while this process holds far more (the reason runProcess goes through GNU time).
func TestRunProcess(t *testing.T) {
	testenv.NeedFile(t, gnuTime)
	big := make([]byte, 256<<20)
	for i := range big {
		big[i] = byte(i)
	}
	st, err := runProcess(context.Background(), "/bin/sh", "-c", "echo out; head -c 50000000 /dev/zero | tail -c 1 >/dev/null")
	runtime.KeepAlive(big)
	if err != nil || string(st.stdout) != "out\n" || st.wall <= 0 {
		t.Fatalf("sh: %+v %v", st, err)
	}
	if st.rssMiB <= 0 || st.rssMiB > 64 {
		t.Errorf("child peak RSS %.1f MiB while the parent holds 256 MiB: want the child's own few MiB", st.rssMiB)
	}
	_, err = runProcess(context.Background(), "/bin/sh", "-c", "echo first >&2; echo 'the cause' >&2; exit 3")
	if err == nil || !strings.HasSuffix(err.Error(), "the cause") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("failing child: %v", err)
	}
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	b := &tailBuffer{max: 4}
	fmt.Fprint(b, "abc")
	fmt.Fprint(b, "defg")
	if b.String() != "defg" {
		t.Errorf("tail %q", b.String())
	}
}
