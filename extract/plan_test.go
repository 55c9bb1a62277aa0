package extract

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/cache"
	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/pipeline"
)

// readManifest is a Run's manifest lines by (video, config).
func readManifest(t *testing.T, path string) map[[2]string][]ManifestLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[[2]string][]ManifestLine{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l ManifestLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[[2]string{l.Video, l.Config}] = append(out[[2]string{l.Video, l.Config}], l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPlanGridIsRun: `plan --grid` (PlanGrid) and `extract` (Run) agree on every config of every grid
// of examples/ over every sample video: a config plan reports as failed is a failed pair of extract,
// with the same message; every other config is an object of exactly the shape plan reports, at the
// output size it prints. (Before, plan planned configs itself and printed output sizes extract then
// refused: a tensor that cannot be built, a loader's frames.)
func TestPlanGridIsRun(t *testing.T) {
	ctx := context.Background()
	grids, _ := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	videos, _ := filepath.Glob(filepath.Join("..", "testdata", "videos", "*"))
	if len(grids) < 4 || len(videos) < 4 {
		t.Fatalf("grids %v, videos %v", grids, videos)
	}
	store, err := cache.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	checked, failed := 0, 0
	for _, gp := range grids {
		g, err := grid.Load(gp)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Run(ctx, Options{Grid: g, Store: store, Jobs: 2}, videos)
		if err != nil || sum.VideosFailed > 0 {
			t.Fatalf("%s: %v %+v", gp, err, sum.Failed)
		}
		lines := readManifest(t, sum.Manifest)
		for _, v := range videos {
			p, err := PlanGrid(ctx, g, gp, Subject{Path: v}, pipeline.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p.Configs {
				got := lines[[2]string{v, c.ID}]
				delete(lines, [2]string{v, c.ID})
				if c.TextOnly {
					if len(got) != 0 {
						t.Errorf("%s %s: text-only, but extract wrote %+v", gp, c.ID, got)
					}
					continue
				}
				if len(got) == 0 {
					t.Errorf("%s %s %s: planned, but extract has no line for it", gp, v, c.ID)
					continue
				}
				for _, l := range got {
					checked++
					switch {
					case c.Error != "":
						failed++
						if l.Status != "failed" || l.Error != pipeline.OneLine(fmt.Errorf("%s", c.Error)) {
							t.Errorf("%s %s: plan says %q, extract %s %q", gp, c.ID, c.Error, l.Status, l.Error)
						}
					case l.Status == "failed":
						t.Errorf("%s %s: plan gives %s %v, extract failed: %s", gp, c.ID, c.OutputSize, c.Shape, l.Error)
					case !slices.Equal(l.Shape, c.Shape) || c.OutputSize != fmt.Sprintf("%dx%d", l.Shape[len(l.Shape)-2], l.Shape[len(l.Shape)-3]):
						t.Errorf("%s %s %s: plan prints %s %v, extract stored %v", gp, v, c.ID, c.OutputSize, c.Shape, l.Shape)
					}
				}
			}
		}
		for k, l := range lines {
			t.Errorf("%s: extract has lines plan does not: %v %+v", gp, k, l)
		}
	}
	t.Logf("%d pairs compared, %d failed in both", checked, failed)
	if checked < 500 || failed == 0 {
		t.Errorf("%d pairs compared, %d failed in both: the grids and videos no longer cover both outcomes", checked, failed)
	}
}

// TestPlanGridCounts: a plan from counts goes through the same planner: with a source size each config
// gets the shape extract would store, without one its frames only; a loader grid needs a video.
func TestPlanGridCounts(t *testing.T) {
	g := testGrid(t, "frames: [4, 600]\npolicies: [uniform]\nresolutions: [\"64x48\"]\ntext_only: true\n")
	p, err := PlanGrid(context.Background(), g, "g.yaml", Subject{Frames: 300, FPS: 30, Width: 640, Height: 480}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Configs) != 3 || p.Failed != 1 || !strings.Contains(p.Configs[1].Error, "600") ||
		!slices.Equal(p.Configs[0].Shape, []int{4, 48, 64, 3}) || p.Configs[0].OutputSize != "64x48" || p.Union.Size != 4 {
		t.Fatalf("%+v", p.Configs)
	}
	p, err = PlanGrid(context.Background(), g, "g.yaml", Subject{Frames: 300, FPS: 30}, pipeline.Options{})
	if err != nil || p.Configs[0].Shape != nil || p.Configs[0].OutputSize != "" || len(p.Configs[0].Plan.Indices) != 4 {
		t.Fatalf("%v %+v", err, p.Configs)
	}
	lg := testGrid(t, "loader: lmms-eval\nframes: [4]\n")
	if _, err := PlanGrid(context.Background(), lg, "l.yaml", Subject{Frames: 300, FPS: 30}, pipeline.Options{}); err == nil || !strings.Contains(err.Error(), "give a VIDEO") {
		t.Fatalf("loader grid from counts: %v", err)
	}
}
