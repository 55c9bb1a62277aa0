package sweep

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/onnx"
	"github.com/framesweep/framesweep/pipeline"
)

// onnxRuntime is the real PP-OCR direction classifier through ONNX Runtime (a tensor runtime).
func onnxRuntime(t *testing.T) (llm.Runtime, llm.Spec) {
	t.Helper()
	model := testenv.NeedEnv(t, "FRAMESWEEP_OCR_MODEL", "FRAMESWEEP_ORT_LIB")[0]
	sp, err := llm.ParseSpec("onnx:model=" + model + ",size=48x192,threads=1")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := onnx.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, sp
}

// TestSweepTensorRuntime: a sweep through a tensor runtime (onnx) feeds it the engine's float tensor,
// built as the runtime describes it, and records that tensor's sha256 as input_sha256: the object an
// extract of the same config stores holds those bytes. A grid at another resolution is refused by
// name before anything runs.
func TestSweepTensorRuntime(t *testing.T) {
	t.Parallel()
	rt, sp := onnxRuntime(t)
	grid := writeGrid(t, "frames: [2]\npolicies: [uniform]\nresolutions: [\"pad:192x48\"]\n")
	dir := t.TempDir()
	// The classifier answers two options (its two classes) and needs an image: two-option items, no
	// text-only config.
	video, err := filepath.Abs("../testdata/videos/nasa_13013.mp4")
	if err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	for _, id := range []string{"a", "b", "c"} {
		fmt.Fprintf(&lines, `{"item_id":%q,"video":%q,"question":"Upside down?","options":["A. no","B. yes"],"answer":"A"}`+"\n", id, video)
	}
	itemsPath := filepath.Join(dir, "items.jsonl")
	testenv.WriteFile(t, itemsPath, []byte(lines.String()))
	its, err := items.Read(itemsPath)
	if err != nil {
		t.Fatal(err)
	}
	store, err := cache.Open(context.Background(), filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, filepath.Join(dir, "run"), rt, sp, grid)
	o.Cache, o.Items = store, its
	sum, err := Run(context.Background(), nil, o)
	if err != nil {
		t.Fatal(err)
	}
	recs := readRun(t, filepath.Join(dir, "run"))
	if len(recs) != 3 || sum.PairsFailed != 0 {
		for _, r := range recs {
			t.Log(r.ItemID, r.Config, r.Status, r.Error)
		}
		t.Fatalf("%d records, %d failed", len(recs), sum.PairsFailed)
	}
	visual := 0
	for k, r := range recs {
		if r.Status != "ok" {
			t.Errorf("%v: %s %s", k, r.Status, r.Error)
		}
		if r.InputKey == "" {
			continue
		}
		visual++
		in, _, err := pipeline.LoadInput(context.Background(), store, r.InputKey)
		if err != nil {
			t.Fatal(err)
		}
		if in.Tensor.DType != cache.F32 || sha(in.Tensor.Data) != r.InputSHA256 || r.Geometry != "pad:192x48" {
			t.Errorf("%v: object %s %v sha %s, record %s at %s", k, in.Tensor.DType, in.Tensor.Shape, sha(in.Tensor.Data), r.InputSHA256, r.Geometry)
		}
	}
	if visual != 3 {
		t.Errorf("%d visual records, want 3", visual)
	}

	bad := writeGrid(t, "frames: [2]\npolicies: [uniform]\nresolutions: [\"64x48\"]\n")
	o = testOptions(t, filepath.Join(dir, "run2"), rt, sp, bad)
	o.Items = its
	_, err = Run(context.Background(), nil, o)
	if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "pad:192x48") || !strings.Contains(err.Error(), "64x48") {
		t.Errorf("grid at 64x48: %v", err)
	}
}
