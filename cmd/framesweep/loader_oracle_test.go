package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// loaderOracle is one job's answer from testdata/oracles/loaders.py: the upstream reader itself
// (../shared/oracles, unmodified) on one video and budget.
type loaderOracle struct {
	Job          string   `json:"job"`
	Error        *string  `json:"error"`
	Frames       []string `json:"frames"`  // sha256 of each returned frame (uint8 HWC)
	Resized      []string `json:"resized"` // qwen-vl-utils: of each resized frame
	Indices      []int    `json:"indices"`
	ResizedShape []int    `json:"resized_shape"`
}

// runLoaderOracle runs the upstream reader ("lmms-eval" or "qwen-vl-utils") on each video at budget
// frames, in one Python process; answers by video. Without the oracles it skips (fails under CI=true).
func runLoaderOracle(t *testing.T, which string, frames int, videos ...string) map[string]loaderOracle {
	t.Helper()
	oracles := testenv.Shared(t, "oracles")
	testenv.NeedFile(t, filepath.Join(oracles, "lmms-eval", "load_video.py"))
	testenv.NeedFile(t, filepath.Join(oracles, "qwen-vl-utils", "vision_process.py"))
	mods := []string{"av", "numpy"}
	if which == "qwen-vl-utils" {
		mods = append(mods, "torch", "torchvision", "packaging", "requests", "PIL")
	}
	py := testenv.NeedPython(t, mods...)
	args := []string{filepath.Join(repoDir(t), "testdata", "oracles", "loaders.py"), oracles, which}
	for _, v := range videos {
		args = append(args, fmt.Sprintf("%s|%d|", v, frames))
	}
	cmd := exec.Command(py, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle %s: %v\n%s", which, err, stderr.Bytes())
	}
	got := map[string]loaderOracle{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for i := 0; sc.Scan(); i++ {
		var r loaderOracle
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Error != nil {
			t.Fatalf("oracle %s on %s: %s", which, videos[i], *r.Error)
		}
		got[videos[i]] = r
	}
	if len(got) != len(videos) {
		t.Fatalf("oracle %s answered %d of %d jobs\n%s", which, len(got), len(videos), stderr.Bytes())
	}
	return got
}

// pngSHA256 is the sha256 of a PNG's pixels as packed RGB (what the oracle hashes).
func pngSHA256(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	b := img.Bounds()
	pix := make([]byte, 0, 3*b.Dx()*b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			pix = append(pix, byte(r>>8), byte(g>>8), byte(bl>>8))
		}
	}
	h := sha256.Sum256(pix)
	return hex.EncodeToString(h[:])
}
