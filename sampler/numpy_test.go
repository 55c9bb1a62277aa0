package sampler

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
)

// pyReference re-states the upstream Python (as quoted in SAMPLING.md) on real numpy; it reads the
// cases as JSON on stdin and prints each case's indices per convention.
const pyReference = `
import json, math, sys
import numpy as np

def internvl_get_index(bound, fps, max_frame, first_idx=0, num_segments=32):
    if bound:
        start, end = bound[0], bound[1]
    else:
        start, end = -100000, 100000
    start_idx = max(first_idx, round(start * fps))
    end_idx = min(round(end * fps), max_frame)
    seg_size = float(end_idx - start_idx) / num_segments
    return [int(start_idx + (seg_size / 2) + np.round(seg_size * idx)) for idx in range(num_segments)]

def vlmeval_nframe(n_frames, nframe):
    step_size = n_frames / (nframe + 1)
    return [int(i * step_size) for i in range(1, nframe + 1)]

def vlmeval_fps(n_frames, vfps, fps):
    total_duration = n_frames / vfps
    required_frames = int(total_duration * fps)
    step_size = vfps / fps
    return [int(i * step_size) for i in range(required_frames)]

def videomme_slicer(num_frames, num_segments):
    seg_size = float(num_frames - 1) / num_segments
    seq = []
    for i in range(num_segments):
        start = int(np.round(seg_size * i))
        end = int(np.round(seg_size * (i + 1)))
        seq.append((start + end) // 2)
    return seq

def lmms_read_video(total, rate, num_frm, fps, force_last):
    if fps is not None:
        num_frm = min(num_frm, int(total / rate * fps))
    sampled = min(total, num_frm)
    idx = np.linspace(0, total - 1, sampled, dtype=int)
    if force_last and (total - 1) not in idx:
        idx = np.append(np.linspace(0, total - 2, sampled - 1, dtype=int), total - 1)
    # frames are kept while decoding in order when i is in the set: the sorted distinct indices
    kept = sorted(set(idx.tolist()))
    if not kept:
        raise ValueError("np.stack of no frames")  # as upstream's np.stack([]) does
    return kept

def lmms_safe(*a):
    try:
        return lmms_read_video(*a)
    except Exception:
        return None  # upstream then returns every frame

def llava_vid(N, avg_fps, max_frames_num, video_fps, force_sample):
    stride = round(avg_fps / video_fps)
    frame_idx = [i for i in range(0, N, stride)]
    frame_time = [i / stride for i in frame_idx]
    if len(frame_idx) > max_frames_num or force_sample:
        frame_idx = np.linspace(0, N - 1, max_frames_num, dtype=int).tolist()
        frame_time = [i / avg_fps for i in frame_idx]
    return frame_idx, ",".join([f"{t:.2f}s" for t in frame_time])

def smart_nframes_fps(total_frames, video_fps, fps):
    min_frames = math.ceil(4 / 2) * 2
    max_frames = math.floor(min(768, total_frames) / 2) * 2
    nframes = total_frames / video_fps * fps
    nframes = min(min(max(nframes, min_frames), max_frames), total_frames)
    return math.floor(nframes / 2) * 2

out = []
for c in json.load(sys.stdin):
    N, n, fps, sfps = c["N"], c["n"], c["fps"], c["sfps"]
    out.append({
        "floor": np.linspace(0, N - 1, n, dtype=int).tolist(),
        "round64": np.linspace(0, N - 1, n).round().astype(int).tolist(),
        "internvl": internvl_get_index(None, fps, N - 1, num_segments=n),
        "vlm_nframe": vlmeval_nframe(N, n),
        "vlm_fps": vlmeval_fps(N, fps, sfps),
        "videomme": videomme_slicer(N, n),
        "lmms": lmms_safe(N, fps, n, sfps if c["use_fps"] else None, c["force_last"]),
        "llava": llava_vid(N, fps, n, sfps, False),
        "qwen_n": smart_nframes_fps(N, fps, sfps),
    })
json.dump(out, sys.stdout)
`

type pyCase struct {
	N         int     `json:"N"`
	Nn        int     `json:"n"`
	FPS       float64 `json:"fps"`
	SFPS      float64 `json:"sfps"`
	UseFPS    bool    `json:"use_fps"`
	ForceLast bool    `json:"force_last"`
}

type pyResult struct {
	Floor     []int `json:"floor"`
	Round64   []int `json:"round64"`
	InternVL  []int `json:"internvl"`
	VLMNframe []int `json:"vlm_nframe"`
	VLMFPS    []int `json:"vlm_fps"`
	VideoMME  []int `json:"videomme"`
	LMMS      []int `json:"lmms"`
	Llava     []any `json:"llava"`
	QwenN     int   `json:"qwen_n"`
}

// TestAgainstNumpy compares every numpy-based convention with the upstream formulas run on real
// numpy (Debian python3-numpy at /usr/bin/python3), on random videos and budgets.
func TestAgainstNumpy(t *testing.T) {
	py := testenv.NeedPython(t, "numpy")
	rng := splitMix64{state: 42}
	fpsList := []float64{23.976023976023978, 24, 25, 29.97002997002997, 30, 50, 59.94005994005994, 60, 12.5}
	sfpsList := []float64{0.5, 1, 2, 0.25, 3}
	var cases []pyCase
	for i := 0; i < 1000; i++ {
		N := 1 + int(rng.below(20000))
		if i%5 == 0 {
			N = 1 + int(rng.below(40))
		}
		n := 1 + int(rng.below(128))
		if i%7 == 0 {
			n = []int{8, 16, 32, 64, 256, 512, 768}[rng.below(7)]
		}
		cases = append(cases, pyCase{N: N, Nn: n, FPS: fpsList[rng.below(uint64(len(fpsList)))],
			SFPS: sfpsList[rng.below(uint64(len(sfpsList)))], UseFPS: i%3 == 0, ForceLast: i%4 == 0})
	}
	in, _ := json.Marshal(cases)
	cmd := exec.Command(py, "-c", pyReference)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var res []pyResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	plan := func(name string, v Video, r Request) ([]int, Selection) {
		s, _ := Lookup(name)
		p, err := s.Select(v, r)
		if err != nil {
			t.Fatalf("%s %+v %+v: %v", name, v, r, err)
		}
		return p.Indices, p
	}
	eq := func(what string, c pyCase, got, want []int) {
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("%s N=%d n=%d fps=%v sfps=%v: got %v\nnumpy %v", what, c.N, c.Nn, c.FPS, c.SFPS, got, want)
		}
	}
	for i, c := range cases {
		r := res[i]
		v := Video{Frames: c.N, FPS: c.FPS}
		eq("floor", c, floorLinspace(0, c.N-1, c.Nn), r.Floor)
		eq("round64", c, roundLinspaceF64(c.N, c.Nn), r.Round64)
		got, _ := plan("internvl3", v, Request{Frames: c.Nn})
		eq("internvl3", c, got, r.InternVL)
		got, _ = plan("vlmevalkit", v, Request{Frames: c.Nn})
		eq("vlmevalkit nframe", c, got, r.VLMNframe)
		got, _ = plan("vlmevalkit", v, Request{SampleFPS: c.SFPS})
		eq("vlmevalkit fps", c, got, r.VLMFPS)
		got, _ = plan("videomme", v, Request{Frames: c.Nn})
		eq("videomme", c, got, r.VideoMME)
		lr := Request{Frames: c.Nn, ForceLast: c.ForceLast}
		if c.UseFPS {
			lr.SampleFPS = c.SFPS
		}
		if got, p := plan("lmms-eval", v, lr); r.LMMS != nil {
			eq("lmms-eval", c, got, r.LMMS)
		} else if len(got) != c.N || len(p.Notes) == 0 {
			t.Fatalf("lmms-eval N=%d: the reference raised, want the all-frames fallback, got %v", c.N, got)
		}
		if stride := int(c.FPS/c.SFPS + 0.5); stride >= 1 {
			got, p := plan("llava-video", v, Request{Frames: c.Nn, SampleFPS: c.SFPS})
			var want []int
			for _, x := range r.Llava[0].([]any) {
				want = append(want, int(x.(float64)))
			}
			eq("llava-video", c, got, want)
			if joined := joinStrings(p.TimestampStrings); joined != r.Llava[1].(string) {
				t.Fatalf("llava-video times N=%d: %q vs %q", c.N, joined, r.Llava[1])
			}
		}
		s, _ := Lookup("qwen2.5-vl")
		p, err := s.Select(v, Request{SampleFPS: c.SFPS})
		if r.QwenN < 2 || r.QwenN > c.N {
			if err == nil {
				t.Fatalf("qwen N=%d: upstream raises (n=%d), got %v", c.N, r.QwenN, p.Indices)
			}
		} else if err != nil || len(p.Indices) != r.QwenN {
			t.Fatalf("qwen smart_nframes N=%d fps=%v f=%v: got %d (%v), want %d", c.N, c.FPS, c.SFPS, len(p.Indices), err, r.QwenN)
		}
	}
	t.Logf("%d random cases agree with numpy", len(cases))
}

func joinStrings(xs []string) string {
	var b bytes.Buffer
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(x)
	}
	return b.String()
}
