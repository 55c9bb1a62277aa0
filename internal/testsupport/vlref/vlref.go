// Package vlref is a reference for what the Qwen-VL family's video processors and rope index
// compute for a video, written from the upstream Python (transformers; each function names its
// file and function) for tests that check the runtimes against it. It shares no code with the
// runtimes it checks (llm, llm/llamacpp) and depends on nothing of framesweep.
package vlref

import (
	"errors"
	"fmt"
)

// Family is a model family whose rope index differs.
type Family int

const (
	Qwen2VL  Family = iota // models/qwen2_vl/modeling_qwen2_vl.py
	Qwen25VL               // models/qwen2_5_vl/modeling_qwen2_5_vl.py
	Qwen3VL                // models/qwen3_vl/modeling_qwen3_vl.py
)

// Grid is a video's patch grid as the video processor returns it (video_grid_thw): temporal
// patches, patch rows, patch columns (before the spatial merge).
type Grid struct{ T, H, W int }

// VideoGrid is the grid Qwen2VLVideoProcessor._preprocess (models/qwen2_vl/video_processing_qwen2_vl.py)
// and Qwen3VLVideoProcessor._preprocess (models/qwen3_vl/video_processing_qwen3_vl.py) give n frames
// of height×width that are not resized (do_resize=False, as lmms-eval and VLMEvalKit call them after
// qwen-vl-utils resized the frames): a frame count that is not a multiple of temporal is padded with
// temporal-1 copies of the last frame ("repeats = patches[:, -1:].repeat(1, temporal_patch_size - 1,
// …)"), then grid_t = frames // temporal, grid_h = height // patch, grid_w = width // patch; the
// view() that follows needs grid_h and grid_w divisible by merge.
func VideoGrid(n, height, width, patch, merge, temporal int) (Grid, error) {
	if n <= 0 || patch <= 0 || merge <= 0 || temporal <= 0 {
		return Grid{}, errors.New("vlref: empty video or sizes")
	}
	if height%patch != 0 || width%patch != 0 || (height/patch)%merge != 0 || (width/patch)%merge != 0 {
		return Grid{}, fmt.Errorf("vlref: %dx%d is not a multiple of patch %d × merge %d", width, height, patch, merge)
	}
	frames := n
	if frames%temporal != 0 {
		frames += temporal - 1
	}
	return Grid{T: frames / temporal, H: height / patch, W: width / patch}, nil
}

// Tokens is the number of video tokens of a grid (processing_qwen2_vl.py / processing_qwen2_5_vl.py:
// video_grid_thw.prod() // merge_size**2; Qwen3VLProcessor.replace_video_token: per frame group
// grid_h*grid_w // merge_size**2, grid_t groups).
func (g Grid) Tokens(merge int) int { return g.T * g.H * g.W / (merge * merge) }

// Tok is a token of a prompt as get_rope_index tells them apart.
type Tok int8

const (
	Text        Tok = iota // any text token
	VisionStart            // <|vision_start|> (a text token that precedes a vision block)
	Video                  // <|video_pad|>, replaced by one visual embedding
)

// RopeIndex returns get_rope_index's (t, h, w) position of every token of seq, one sequence
// without padding, for videos with the given grids (in order) and, for Qwen2.5-VL, each video's
// second_per_grid_t (the processor's temporal_patch_size / fps).
//
//   - All families: text takes st_idx + arange(text_len) on all three axes, st_idx being one past the
//     largest position so far; a vision block takes (t_index, h_index, w_index) + text_len + st_idx
//     with h_index, w_index the merged grid's row and column (h // merge, w // merge).
//   - Qwen2-VL: t_index = arange(grid_t) (modeling_qwen2_vl.py, get_rope_index).
//   - Qwen2.5-VL: t_index = (arange(grid_t) × second_per_grid_t × tokens_per_second).long()
//     (modeling_qwen2_5_vl.py, get_rope_index). torch computes the product in float32: the
//     processor stores second_per_grid_ts as a float32 tensor and an int64 range times it is
//     float32. intCast reproduces the transformers versions that first cast second_per_grid_t to
//     the range's int64 dtype ("torch.as_tensor(second_per_grid_t, dtype=range_tensor.dtype)"),
//     which truncates a fractional interval (1.25 s → 1).
//   - Qwen3-VL: the grid is split into grid_t groups of one temporal patch
//     ("video_grid_thw = torch.repeat_interleave(video_grid_thw, video_grid_thw[:, 0], dim=0);
//     video_grid_thw[:, 0] = 1", modeling_qwen3_vl.py, get_rope_index): every group is its own
//     vision block with t_index 0, separated by its timestamp text.
func RopeIndex(f Family, seq []Tok, grids []Grid, secondPerGrid []float64, merge int, tokensPerSecond float64, intCast bool) ([][3]int, error) {
	if f == Qwen3VL {
		var split []Grid
		for _, g := range grids {
			for range g.T {
				split = append(split, Grid{T: 1, H: g.H, W: g.W})
			}
		}
		grids = split
	}
	out := make([][3]int, 0, len(seq))
	next := 0 // llm_pos_ids_list[-1].max() + 1
	text := func(n int) {
		for k := range n {
			out = append(out, [3]int{next + k, next + k, next + k})
		}
		next += n
	}
	st := 0
	for vi, g := range grids {
		ed := -1
		for i := st; i < len(seq); i++ {
			if seq[i] == Video {
				ed = i
				break
			}
		}
		if ed < 0 || ed == 0 || seq[ed-1] != VisionStart {
			return nil, fmt.Errorf("vlref: video %d: no <|vision_start|><|video_pad|> after token %d", vi, st)
		}
		text(ed - st)
		lt, lh, lw := g.T, g.H/merge, g.W/merge
		base, top := next, next-1
		for t := range lt {
			var ti int
			switch f {
			case Qwen25VL:
				s := secondPerGrid[vi]
				if intCast {
					s = float64(int64(s))
				}
				ti = int(int64(float32(float32(t)*float32(s)) * float32(tokensPerSecond)))
			case Qwen2VL:
				ti = t
			}
			for h := range lh {
				for w := range lw {
					p := [3]int{base + ti, base + h, base + w}
					out = append(out, p)
					top = max(top, p[0], p[1], p[2])
				}
			}
		}
		st = ed + lt*lh*lw
		for i := ed; i < st; i++ {
			if i >= len(seq) || seq[i] != Video {
				return nil, fmt.Errorf("vlref: video %d: %d video tokens expected from token %d", vi, lt*lh*lw, ed)
			}
		}
		next = top + 1
	}
	text(len(seq) - st)
	return out, nil
}

// Qwen3Timestamps are the times Qwen3VLProcessor writes before each frame group
// (processing_qwen3_vl.py, _calculate_timestamps and replace_video_token): each index over the
// video's fps, the list padded by repeating the last, the mean of the first and last of each group
// of merge_size (the temporal patch size), printed "<%.1f seconds>".
func Qwen3Timestamps(indices []int, fps float64, temporal int) []string {
	idx := append([]int(nil), indices...)
	for len(idx)%temporal != 0 {
		idx = append(idx, idx[len(idx)-1])
	}
	var out []string
	for i := 0; i < len(idx); i += temporal {
		a, b := float64(idx[i])/fps, float64(idx[i+temporal-1])/fps
		out = append(out, fmt.Sprintf("<%.1f seconds>", (a+b)/2))
	}
	return out
}

// SampleFPS is qwen-vl-utils' sample_fps for n frames drawn from a video of total frames at fps
// (qwen_vl_utils/vision_process.py, fetch_video: nframes / max(total_frames, 1e-6) * video_fps),
// the fps lmms-eval's qwen2_5_vl_chat passes on to the processor.
func SampleFPS(n, total int, fps float64) float64 {
	return float64(n) / max(float64(total), 1e-6) * fps
}
