package sampler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// pyTorchLinspace prints, for each [N, n] on stdin, torch.linspace(0, N-1, n).round().long() (the
// float32 default dtype), qwen-vl-utils' index rule, on the installed torch.
const pyTorchLinspace = `
import json, sys
import torch
cases = json.load(sys.stdin)
print(json.dumps({"torch": torch.__version__,
                  "out": [torch.linspace(0, N - 1, n).round().long().tolist() for N, n in cases]}))
`

// TestTorchLinspaceMatchesTorch checks the float32 torch.linspace emulation against real torch
// (Debian's python3-torch 1.13.1, whose CPU kernels are the vectorised AVX2 build: Torch113AVX2),
// on short and 1-hour videos, including the n = 768 cases where kernels disagree.
func TestTorchLinspaceMatchesTorch(t *testing.T) {
	py := testenv.NeedPython(t, "torch")
	var cases [][2]int
	for _, N := range []int{2, 3, 17, 120, 325, 390, 1800, 7200, 21766, 108000, 107892, 216000} {
		for _, n := range []int{2, 4, 8, 16, 32, 64, 100, 256, 512, 768} {
			if n <= N {
				cases = append(cases, [2]int{N, n})
			}
		}
	}
	for i := 0; i < 200; i++ { // seeded spread of (N, n)
		N := 1000 + (i*7919)%200000
		cases = append(cases, [2]int{N, 2 * (1 + (i*104729)%384)})
	}
	in, _ := json.Marshal(cases)
	cmd := exec.Command(py, "-c", pyTorchLinspace)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("torch: %v", err)
	}
	var got struct {
		Torch string    `json:"torch"`
		Out   [][]int64 `json:"out"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	diffs := map[Torch]int{}
	for k, c := range cases {
		for _, variant := range []Torch{Torch113AVX2, Torch2, Torch2NoFMA} {
			ys := TorchLinspace(0, float32(c[0]-1), c[1], variant)
			bad := 0
			for i, y := range ys {
				if int64(math.RoundToEven(float64(y))) != got.Out[k][i] {
					bad++
				}
			}
			diffs[variant] += bad
			if variant == Torch113AVX2 && bad > 0 {
				t.Errorf("N=%d n=%d: %d indices differ from torch %s", c[0], c[1], bad, got.Torch)
			}
		}
	}
	t.Logf("torch %s, %d cases: indices differing per emulated kernel: %s", got.Torch, len(cases), fmt.Sprint(diffs))
}
