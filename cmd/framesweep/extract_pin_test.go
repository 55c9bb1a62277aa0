package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/framesweep/framesweep/cache"
)

var updatePin = flag.Bool("update", false, "rewrite testdata/extract_pin.golden.json from this build")

// pinGrid covers every kind of output the engine builds: plain resizes, a centre crop, Qwen's
// smart_resize, InternVL tiles + thumbnail, seeded random sampling, both pipelines.
const pinGrid = `name: pin
frames: [2, 8]
policies: [uniform, random]
seeds: [7]
resolutions: ["64x48", "short:40+crop:32", "qwen2.5-vl:max_pixels=12544", "internvl3:max_num=2,tile=28"]
pipelines: [raw, cached]
`

// pinObject is what must not change when the engine moves: which objects exist, under which key,
// and their exact tensor bytes.
type pinObject struct {
	Video        string `json:"video"`
	Config       string `json:"config"`
	Pipeline     string `json:"pipeline"`
	DType        string `json:"dtype"`
	Key          string `json:"key"`
	Shape        []int  `json:"shape"`
	Indices      []int  `json:"indices"`
	FramesSHA256 string `json:"frames_sha256"`
}

// TestExtractPinnedDigests extracts a small grid from the testdata videos (uint8 and float16) and
// compares every object's key, shape, indices and the sha256 of its frames tensor with the golden
// file. The object digests themselves also cover machine-dependent metadata (the SIMD dispatch level,
// the source path), so the tensor bytes are pinned instead; they are the same at every level.
func TestExtractPinnedDigests(t *testing.T) {
	t.Parallel()
	videos, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "videos", "*"))
	sort.Strings(videos)
	if len(videos) < 4 {
		t.Fatalf("testdata/videos holds %d videos, want 4", len(videos))
	}
	var got []pinObject
	for _, dt := range []string{"u8", "f16"} {
		text := pinGrid
		if dt == "f16" { // the float path once, on one geometry
			text = "name: pin-f16\nframes: [2, 8]\npolicies: [uniform]\nresolutions: [\"64x48\"]\npipelines: [raw, cached]\n"
		}
		grid := exWriteGrid(t, text)
		store := t.TempDir()
		args := []string{"--grid", grid, "--out", store, "--dtype", dt, "--norm", "clip"}
		// Exit 1 is expected: 8 frames of the 3-frame clip cannot be planned.
		code, sum, stderr := exRun(t, append(args, videos...)...)
		if code != exitOK && code != exitError {
			t.Fatalf("extract --dtype %s: exit %d\n%s", dt, code, stderr)
		}
		if sum.ObjectsWritten == 0 {
			t.Fatalf("extract --dtype %s wrote nothing\n%s", dt, stderr)
		}
		got = append(got, pinCollect(t, store)...)
	}
	sort.Slice(got, func(i, j int) bool {
		a, b := got[i], got[j]
		if a.DType != b.DType {
			return a.DType < b.DType
		}
		if a.Video != b.Video {
			return a.Video < b.Video
		}
		if a.Config != b.Config {
			return a.Config < b.Config
		}
		return a.Pipeline < b.Pipeline
	})
	golden := filepath.Join("testdata", "extract_pin.golden.json")
	enc, _ := json.MarshalIndent(got, "", " ")
	enc = append(enc, '\n')
	if *updatePin {
		if err := os.WriteFile(golden, enc, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, enc) {
		var w []pinObject
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatalf("the golden file: %v", err)
		}
		t.Errorf("%d objects, golden has %d", len(got), len(w))
		for i := 0; i < len(got) && i < len(w); i++ {
			if g, e := got[i], w[i]; g.Key != e.Key || g.FramesSHA256 != e.FramesSHA256 || g.Config != e.Config {
				t.Errorf("object %d: got %+v\n want %+v", i, g, e)
			}
		}
	}
}

// pinCollect reads every object of a store through its refs.
func pinCollect(t *testing.T, root string) []pinObject {
	t.Helper()
	refs, _ := filepath.Glob(filepath.Join(root, "ac", "*", "*.json"))
	var out []pinObject
	for _, r := range refs {
		b, err := os.ReadFile(r)
		if err != nil {
			t.Fatal(err)
		}
		var ref cache.Ref
		if err := json.Unmarshal(b, &ref); err != nil {
			t.Fatal(err)
		}
		obj, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(cache.ObjectName(ref.Digest))))
		if err != nil {
			t.Fatal(err)
		}
		f, err := cache.ParseSafetensors(obj)
		if err != nil {
			t.Fatal(err)
		}
		fr := f.Tensors["frames"]
		sum := sha256.Sum256(fr.Data)
		var idx []int
		if err := json.Unmarshal([]byte(f.Metadata["indices"]), &idx); err != nil {
			t.Fatalf("%s: indices %q: %v", ref.Key, f.Metadata["indices"], err)
		}
		out = append(out, pinObject{
			Video: filepath.Base(f.Metadata["source_path"]), Config: f.Metadata["config"], Pipeline: f.Metadata["pipeline"],
			DType: string(fr.DType), Key: ref.Key, Shape: fr.Shape, Indices: idx, FramesSHA256: hex.EncodeToString(sum[:]),
		})
	}
	return out
}
