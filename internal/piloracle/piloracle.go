// Package piloracle drives Debian's Pillow 9.4 (/usr/bin/python3) as a test oracle: it resizes and
// times RGB images exactly as `Image.frombytes("RGB", …).resize(size, filter)` does, in one Python
// process per batch. It is used by tests and benchmarks only; when Python or PIL is absent, Available
// reports why so callers can skip with a reason.
package piloracle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/framesweep/framesweep/rgb"
)

// Python is the interpreter with PIL (Debian's; pyenv's python3 on PATH lacks PIL).
const Python = "/usr/bin/python3"

// ErrUnavailable means Python or PIL cannot be run here.
var ErrUnavailable = errors.New("piloracle: /usr/bin/python3 with PIL is not available")

// Available reports whether the oracle can run, and which Pillow version it is.
func Available() (version string, err error) {
	out, err := exec.Command(Python, "-c", "import PIL; print(PIL.__version__)").Output()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return string(bytes.TrimSpace(out)), nil
}

// Case is one resize: Src to OutW×OutH with Filter ("bilinear", "bicubic", "lanczos", "nearest").
type Case struct {
	Src        *rgb.Image
	OutW, OutH int
	Filter     string
}

const script = `
import sys, json, time
from PIL import Image
F = {"bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC, "lanczos": Image.LANCZOS, "nearest": Image.NEAREST}
spec = json.load(open(sys.argv[1]))
res = []
for c in spec["cases"]:
    with open(c["in"], "rb") as f:
        im = Image.frombytes("RGB", (c["w"], c["h"]), f.read())
    flt = F[c["filter"]]
    out = im.resize((c["ow"], c["oh"]), flt)
    ts = []
    for _ in range(spec.get("reps", 0)):
        t0 = time.perf_counter()
        im.resize((c["ow"], c["oh"]), flt)
        ts.append(time.perf_counter() - t0)
    if c.get("out"):
        with open(c["out"], "wb") as f:
            f.write(out.tobytes())
    res.append(ts)
print(json.dumps(res))
`

// Resize runs every case through Pillow and returns the outputs in order.
func Resize(dir string, cases []Case) ([]*rgb.Image, error) {
	outs, _, err := run(dir, cases, 0, true)
	return outs, err
}

// Time reports, per case, the wall time of each of reps calls of Image.resize measured inside Python
// (time.perf_counter around the call only, so process start and I/O are excluded; the first call,
// which produced the output, is a warm-up and not reported).
func Time(dir string, cases []Case, reps int) ([][]time.Duration, error) {
	_, t, err := run(dir, cases, reps, false)
	return t, err
}

func run(dir string, cases []Case, reps int, want bool) ([]*rgb.Image, [][]time.Duration, error) {
	type jc struct {
		In     string `json:"in"`
		Out    string `json:"out,omitempty"`
		W      int    `json:"w"`
		H      int    `json:"h"`
		OW     int    `json:"ow"`
		OH     int    `json:"oh"`
		Filter string `json:"filter"`
	}
	var spec struct {
		Cases []jc `json:"cases"`
		Reps  int  `json:"reps"`
	}
	spec.Reps = reps
	written := map[*rgb.Image]string{}
	for i, c := range cases {
		in, ok := written[c.Src]
		if !ok {
			in = filepath.Join(dir, "in"+strconv.Itoa(i)+".rgb")
			if err := os.WriteFile(in, c.Src.Packed(), 0o644); err != nil {
				return nil, nil, err
			}
			written[c.Src] = in
		}
		j := jc{In: in, W: c.Src.W, H: c.Src.H, OW: c.OutW, OH: c.OutH, Filter: c.Filter}
		if want {
			j.Out = filepath.Join(dir, "out"+strconv.Itoa(i)+".rgb")
		}
		spec.Cases = append(spec.Cases, j)
	}
	specPath := filepath.Join(dir, "spec.json")
	b, _ := json.Marshal(spec)
	if err := os.WriteFile(specPath, b, 0o644); err != nil {
		return nil, nil, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(Python, "-c", script, specPath)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("piloracle: python: %v: %s", err, stderr.String())
	}
	var secs [][]float64
	if err := json.Unmarshal(out, &secs); err != nil {
		return nil, nil, fmt.Errorf("piloracle: bad output %q: %v", out, err)
	}
	times := make([][]time.Duration, len(secs))
	for i, ss := range secs {
		for _, s := range ss {
			times[i] = append(times[i], time.Duration(s*float64(time.Second)))
		}
	}
	if !want {
		return nil, times, nil
	}
	imgs := make([]*rgb.Image, len(cases))
	for i, c := range spec.Cases {
		pix, err := os.ReadFile(c.Out)
		if err != nil {
			return nil, nil, err
		}
		if len(pix) != 3*c.OW*c.OH {
			return nil, nil, fmt.Errorf("piloracle: case %d: %d bytes, want %d", i, len(pix), 3*c.OW*c.OH)
		}
		imgs[i] = &rgb.Image{W: c.OW, H: c.OH, Stride: 3 * c.OW, Pix: pix}
	}
	return imgs, times, nil
}
