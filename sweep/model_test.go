package sweep

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/internal/version"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/llamacpp"
	"github.com/framesweep/framesweep/llm/testmodel"
	"github.com/framesweep/framesweep/record"
)

// TestSweepRecordsModel: every record names the model (the GGUF's base name), the digest of the
// weights files (record.WeightsDigest of model_sha256) and the runtime's context size; a budget
// whose prompt does not fit the context is an error record marked over_context, the others are
// answered and unmarked.
func TestSweepRecordsModel(t *testing.T) {
	t.Parallel()
	tm, err := testmodel.Write(t.TempDir(), testmodel.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	// The tiny model's prompts are ~280-350 tokens and each frame ~4: 450 tokens hold 2 frames and
	// not 64.
	sp, err := llm.ParseSpec("llamacpp:model=" + tm.Model + ",mmproj=" + tm.Mmproj + ",threads=1,ctx=450")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := llamacpp.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	grid := filepath.Join(t.TempDir(), "grid.yaml")
	testenv.WriteFile(t, grid, []byte("frames: [2, 64]\npolicies: [uniform]\nresolutions: [\"64x48\"]\ntext_only: true\n"))
	o := testOptions(t, filepath.Join(t.TempDir(), "run"), rt, sp, grid)
	var nasa = o.Items.Items[:0]
	for _, it := range o.Items.Items {
		if filepath.Base(it.Video) == "nasa_13013.mp4" { // 325 frames: 64 can be planned
			nasa = append(nasa, it)
		}
	}
	o.Items.Items = nasa
	if _, err := Run(context.Background(), nil, o); err != nil {
		t.Fatal(err)
	}
	recs := readRun(t, o.Out)
	if len(recs) != 3*len(nasa) || len(nasa) != 3 {
		t.Fatalf("%d records for %d items", len(recs), len(nasa))
	}
	for k, r := range recs {
		want := record.WeightsDigest(r.ModelSHA256)
		if r.Model != "tiny-llama" || r.WeightsSHA256 == "" || r.WeightsSHA256 != want || len(r.ModelSHA256) != 2 ||
			r.ContextTokens == nil || *r.ContextTokens != 450 {
			t.Fatalf("%v: model %q weights %q (want %q from %v) context %v", k, r.Model, r.WeightsSHA256, want, r.ModelSHA256, r.ContextTokens)
		}
		// The llama.cpp release and the CPU backend that loaded (e.g. "…; CPU libggml-cpu-zen4.so").
		if !strings.HasPrefix(r.RuntimeBackend, "llama.cpp "+version.LlamaCpp+" (ggml ") || !strings.Contains(r.RuntimeBackend, "; CPU libggml-cpu-") {
			t.Fatalf("%v: runtime_backend %q", k, r.RuntimeBackend)
		}
		over := k.Config == "f64-uniform-64x48-raw"
		if over != (r.Status == record.StatusError) || over != r.OverContext {
			t.Errorf("%v: status %s over_context %v (%s)", k, r.Status, r.OverContext, r.Error)
		}
	}
}
