package sweep

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/framesweep/framesweep/internal/engine/worker"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/llm/llamacpp"
	"github.com/framesweep/framesweep/llm/testmodel"
)

// TestSweepRecordsVideoForm: the sweep hands each input's timing to the runtime, so the tiny
// Qwen2.5-VL reads its frames as temporal pairs, and every visual record says how the frames reached
// the model: input_mode, input_form, the fps its processor was told, the visual tokens and their groups (4 frames:
// 2 pairs); text-only records say nothing of it.
func TestSweepRecordsVideoForm(t *testing.T) {
	t.Parallel()
	tm, err := testmodel.WriteArch(t.TempDir(), testmodel.ArchQwen25VL, testmodel.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := llm.ParseSpec("llamacpp:model=" + tm.Model + ",mmproj=" + tm.Mmproj + ",threads=1,image_max_tokens=16")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := llamacpp.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	grid := writeGrid(t, "frames: [4]\npolicies: [uniform]\nresolutions: [\"56x56\"]\ntext_only: true\n")
	dir := t.TempDir()
	o := testOptions(t, filepath.Join(dir, "run"), rt, sp, grid)
	o.Limit = 2
	if _, err := Run(context.Background(), nil, o); err != nil {
		t.Fatal(err)
	}
	recs := readRun(t, filepath.Join(dir, "run"))
	if len(recs) != 4 {
		t.Fatalf("%d records", len(recs))
	}
	for k, r := range recs {
		if r.Status != "ok" {
			t.Fatalf("%v: %s", k, r.Error)
		}
		if r.InputSHA256 == "" {
			if r.InputMode != "" || r.InputForm != "" || r.VisualTokens != nil || len(r.VisualGroups) != 0 {
				t.Errorf("%v: text-only record with input form %q %+v", k, r.InputMode, r.VisualTokens)
			}
			continue
		}
		v := r.VisualTokens
		if r.InputMode != "video" || r.InputForm != llm.FormQwen25VLVideo || r.VideoFPS <= 0 || r.VideoFPSSource == "" || len(r.VisualGroups) != 2 ||
			v == nil || v.Seen == nil || v.Expected == nil || *v.Expected != *v.Seen || v.How != llm.HowRuntime || v.Family != llm.FamilyQwen25VL {
			t.Errorf("%v: mode %q fps %g (%s), %+v tokens in %d groups", k, r.InputMode, r.VideoFPS, r.VideoFPSSource, v, len(r.VisualGroups))
			continue
		}
		sum := 0
		for g, grp := range r.VisualGroups {
			sum += grp.Tokens
			if len(grp.Frames) != 2 || grp.Frames[0] != 2*g {
				t.Errorf("%v: group %d frames %v", k, g, grp.Frames)
			}
		}
		if sum != *v.Seen {
			t.Errorf("%v: groups hold %d tokens, record says %d", k, sum, *v.Seen)
		}
	}
}

// TestSweepTiledInternVL: a tiled geometry (tiles=4: internvl3:max_num=4, at the tiny projector's
// 56-pixel tile) reaches the InternVL runtime as frames of several images with one timestamp per
// frame, so it reads them as its video: one "Frame{i}: " block per frame holding every tile and the
// thumbnail, and each record says so (input_form internvl-frames, images_per_frame, a visual group per
// image with the label on each frame's first).
func TestSweepTiledInternVL(t *testing.T) {
	t.Parallel()
	tm, err := testmodel.WriteArch(t.TempDir(), testmodel.ArchInternVL, testmodel.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := llm.ParseSpec("llamacpp:model=" + tm.Model + ",mmproj=" + tm.Mmproj + ",threads=1")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := llamacpp.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	grid := writeGrid(t, "frames: [4]\npolicies: [uniform]\nresolutions: [\"internvl3:max_num=4,tile=56\"]\n")
	dir := t.TempDir()
	o := testOptions(t, filepath.Join(dir, "run"), rt, sp, grid)
	o.Limit = 1
	if _, err := Run(context.Background(), nil, o); err != nil {
		t.Fatal(err)
	}
	recs := readRun(t, filepath.Join(dir, "run"))
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	for k, r := range recs {
		per := r.Images
		if r.Status != "ok" || per < 2 || r.InputMode != "video" || r.InputForm != llm.FormInternVLFrames || len(r.VisualGroups) != 4*per {
			t.Fatalf("%v: status %q %s, %d images per frame, mode %q form %q, %d groups", k, r.Status, r.Error, per, r.InputMode, r.InputForm, len(r.VisualGroups))
		}
		for g, grp := range r.VisualGroups {
			want := ""
			if g%per == 0 {
				want = "Frame" + strconv.Itoa(g/per+1) + ": "
			}
			if grp.Prefix != want {
				t.Errorf("%v: group %d prefix %q, want %q", k, g, grp.Prefix, want)
			}
		}
	}
}

// TestSweepRecordsLoader: a grid read by a harness's loader names it in every visual record's
// config_meta (the audit and the export say which reader made the frames); a loader grid under worker
// isolation, which loaders cannot run in, fails once at the start, not per pair.
func TestSweepRecordsLoader(t *testing.T) {
	t.Parallel()
	rt, sp := tinyRuntime(t)
	grid := writeGrid(t, "frames: [2]\nloader: lmms-eval\nresolutions: [\"64x48\"]\ntext_only: true\n")
	dir := t.TempDir()
	o := testOptions(t, filepath.Join(dir, "run"), rt, sp, grid)
	o.Limit = 2
	if _, err := Run(context.Background(), nil, o); err != nil {
		t.Fatal(err)
	}
	recs := readRun(t, filepath.Join(dir, "run"))
	visual := 0
	for k, r := range recs {
		if r.Status != "ok" {
			t.Fatalf("%v: %s", k, r.Error)
		}
		if r.InputSHA256 == "" {
			continue
		}
		visual++
		if r.ConfigMeta == nil || r.ConfigMeta.Loader != "lmms-eval" {
			t.Errorf("%v: config_meta %+v", k, r.ConfigMeta)
		}
	}
	if visual != 2 {
		t.Errorf("%d visual records, want 2", visual)
	}
	o = testOptions(t, filepath.Join(dir, "run2"), rt, sp, grid)
	o.Input.Worker = &worker.Limits{}
	if _, err := Run(context.Background(), nil, o); !errors.Is(err, ErrOptions) {
		t.Errorf("loader grid with worker isolation: %v", err)
	}
}
