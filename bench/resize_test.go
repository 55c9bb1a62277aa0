package bench

import (
	"strings"
	"testing"

	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/resize"
)

func TestResizeRows(t *testing.T) {
	rows, err := Resize(ResizeOptions{Cases: []ResizeCase{{96, 64, 40, 30}}, Reps: 3, Warmup: 1, Workers: 2, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// Pillow + OpenCV baselines, every level, the banded row, and the six other kernels.
	if want := 2 + len(native.Supported()) + 1 + len(resize.Kernels()) - 1; len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	if !strings.HasPrefix(rows[0].Name, "Resize/baseline=pillow") {
		t.Errorf("first row %q is not the Pillow baseline", rows[0].Name)
	}
	for _, r := range rows {
		if r.Failure != "" {
			t.Logf("%s: %s", r.Name, r.Failure)
			continue
		}
		if r.Iterations != 3 || r.Seconds <= 0 || r.Env.CPU == "" {
			t.Errorf("%s: iterations %d seconds %v cpu %q", r.Name, r.Iterations, r.Seconds, r.Env.CPU)
		}
		if strings.Contains(r.Name, "kernel=pil-bicubic") {
			if _, ok := r.Metric("x-cv-cubic"); !ok {
				t.Errorf("%s lacks x-cv-cubic", r.Name)
			}
			if _, ok := r.Metric("x-pillow"); !ok && rows[0].Failure == "" {
				t.Errorf("%s lacks x-pillow", r.Name)
			}
		}
	}
}
