package llamacpp

import (
	"fmt"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/native"
	"github.com/framesweep/framesweep/rgb"
)

// videoPath is how a family reads a video in process (input=video).
type videoPath int

const (
	noVideo videoPath = iota
	// videoQwen2VL: temporal pairs through the Conv3d's two patch kernels (upstream mtmd's temporal
	// merge of two mergeable bitmaps), one
	// <|vision_start|>…<|vision_end|> block whose pair g has temporal position start+g
	// (transformers models/qwen2_vl/modeling_qwen2_vl.py, get_rope_index: t_index = arange(grid_t)).
	videoQwen2VL
	// videoQwen25VL: the same block with temporal positions by absolute time, start +
	// ⌊g × second_per_grid_t × tokens_per_second⌋, second_per_grid_t = 2 / fps
	// (models/qwen2_5_vl/modeling_qwen2_5_vl.py, get_rope_index; processing_qwen2_5_vl.py).
	videoQwen25VL
	// videoQwen3VL: each pair its own block after its time as text, "<t.t seconds><|vision_start|>…
	// <|vision_end|>" (models/qwen3_vl/processing_qwen3_vl.py, replace_video_token and
	// _calculate_timestamps; modeling_qwen3_vl.py, get_rope_index splits the video's grid per pair).
	videoQwen3VL
	// videoInternVL: one 448×448 tile per frame behind "Frame{i}: " lines, i from 1 (the InternVL
	// model card's video example: load_video(max_num=1), video_prefix "Frame{i+1}: <image>\n").
	// load_video resizes each frame to the tile with PIL's bicubic (dynamic_preprocess with
	// max_num=1, then T.Resize): framesweep does the same (Pillow-exact, native.Bicubic) before mtmd,
	// whose own InternVL preprocessing would tile a frame of any other size (up to 12 tiles and a
	// thumbnail, the model card's image path).
	videoInternVL
)

// videoPaths maps a projector type to its family's video path; types absent have none.
var videoPaths = map[string]videoPath{
	"qwen2vl_merger":   videoQwen2VL,
	"qwen2.5vl_merger": videoQwen25VL,
	"qwen3vl_merger":   videoQwen3VL,
	"internvl":         videoInternVL,
}

// videoForms names each path's form (llm.Response.InputForm).
var videoForms = map[videoPath]string{
	videoQwen2VL:  llm.FormQwen2VLVideo,
	videoQwen25VL: llm.FormQwen25VLVideo,
	videoQwen3VL:  llm.FormQwen3VLVideo,
	videoInternVL: llm.FormInternVLFrames,
}

// noVideoWhy says why a projector type has no video path (the input=video refusal).
var noVideoWhy = map[string]string{
	"mlp": "LLaVA-1.5/1.6 projectors read images; LLaVA-NeXT-Video's 2×2 pooled frames need a pooling projector no GGUF converter writes",
}

// needsTiming: the path places frames by time, so a request must say when they were taken.
func (v videoPath) needsTiming() bool { return v == videoQwen25VL || v == videoQwen3VL }

// qwen25Time is Qwen2.5-VL's temporal position offset of pair g: g × second_per_grid_t ×
// tokens_per_second truncated to an integer, in float32 as torch computes it (the processor stores
// second_per_grid_ts as a float32 tensor; int tensor × float32 → float32; .long() truncates).
func qwen25Time(g int, secondPerGrid, tps float64) int {
	x := float32(g) * float32(secondPerGrid)
	x *= float32(tps)
	return int(x)
}

// mode returns the input mode of a request with frames: the spec's input=, or video when the
// request carries timing and the family has a video path that takes its frames (tiled frames: only
// InternVL's).
func (r *Runtime) mode(req *llm.Request) (string, error) {
	tiled := req.Images() > 1
	m := r.input
	if m == "" {
		m = llm.InputImages
		if r.video != noVideo && req.Video != nil && (!tiled || r.video == videoInternVL) {
			m = llm.InputVideo
		}
	}
	if m == llm.InputVideo && tiled && r.video != videoInternVL {
		return "", llm.Errorf("answer", r.mmproj, llm.ErrBadRequest, "input=video with a %s projector: its video reading takes one image per frame, not %d tiles (use input=images)", r.proj, req.Images())
	}
	if m == llm.InputVideo && r.video.needsTiming() && req.Video == nil {
		return "", llm.Errorf("answer", r.mmproj, llm.ErrBadRequest, "input=video with a %s projector needs the frames' timing (Request.Video): its positions or timestamps follow time", r.proj)
	}
	return m, nil
}

// videoPieces lays the frames out as the family's video processor does. The frames and pairs it
// tokenizes are recorded in own, which the caller frees.
func (r *Runtime) videoPieces(req *llm.Request, resp *llm.Response, own *owned) ([]piece, error) {
	resp.InputForm = videoForms[r.video]
	if r.video == videoInternVL {
		return r.internVLPieces(req, own)
	}
	fr := req.Frames
	for _, f := range fr[1:] {
		if f.W != fr[0].W || f.H != fr[0].H {
			return nil, llm.Errorf("answer", r.mmproj, llm.ErrBadRequest, "video frames differ in size (%dx%d and %dx%d)", fr[0].W, fr[0].H, f.W, f.H)
		}
	}
	start, err := r.model.tokenize("<|vision_start|>", false, true)
	if err != nil {
		return nil, err
	}
	end, err := r.model.tokenize("<|vision_end|>", false, true)
	if err != nil {
		return nil, err
	}
	var secondPerGrid float64
	var times []float64
	switch r.video {
	case videoQwen25VL:
		fps, src, err := req.Video.FPS(len(fr))
		if err != nil {
			return nil, err
		}
		secondPerGrid = 2 / fps // temporal_patch_size / fps
		resp.VideoFPS, resp.VideoFPSSource = fps, src
		if w := llm.FPSWarning(fps, len(fr), req.Video.TotalFrames, req.Video.SourceFPS); w != "" {
			resp.VideoWarnings = append(resp.VideoWarnings, w)
		}
	case videoQwen3VL:
		times = llm.PairTimes(req.Video.TimestampsS)
		resp.VideoTimestampsS = times
	}
	// Qwen3-VL: "<t seconds><|vision_start|>" pair "<|vision_end|>" per pair; the others: one block.
	var out []piece
	if r.video != videoQwen3VL {
		out = append(out, piece{text: start})
	}
	for g := 0; 2*g < len(fr); g++ {
		v, err := r.pairPiece(fr, g, own)
		if err != nil {
			return nil, err
		}
		switch r.video {
		case videoQwen2VL:
			v.join, v.dt = g > 0, g
		case videoQwen25VL:
			v.join, v.dt = g > 0, qwen25Time(g, secondPerGrid, r.tps)
		case videoQwen3VL:
			v.group.Prefix = llm.TimestampText(times[g])
			ts, err := r.model.tokenize(v.group.Prefix, false, false)
			if err != nil {
				return nil, err
			}
			out = append(out, piece{text: append(ts, start...)}, v, piece{text: end})
			continue
		}
		out = append(out, v)
	}
	if r.video != videoQwen3VL {
		out = append(out, piece{text: end})
	}
	return out, nil
}

// pairPiece preprocesses temporal pair g: frames 2g and 2g+1, or the last frame twice when the
// count is odd (the video processors pad with the last frame). Upstream mtmd merges the pair into one
// image chunk; its marker text is left out, since the family's layout (one block for the video, or a
// block per pair after its time) is ours.
func (r *Runtime) pairPiece(fr []*rgb.Image, g int, own *owned) (piece, error) {
	a, b := 2*g, min(2*g+1, len(fr)-1)
	f, err := r.mtmd.tokenizeFrame(fr[a], fr[b])
	if err == nil {
		own.frames = append(own.frames, f)
	}
	var k int
	if err == nil {
		k, err = f.image()
	}
	if err != nil {
		return piece{}, llm.Errorf("answer", r.mmproj, llm.ErrBadImage, "frames %d,%d (%dx%d): %v", a, b, fr[a].W, fr[a].H, err)
	}
	c := f.chunks[k]
	return piece{frame: f, chunk: k, nTok: c.nTok, gridW: c.gridW, gridH: c.gridH, group: llm.VisualGroup{Frames: []int{a, b}}}, nil
}

// internVLPieces: per frame "Frame{i}: " (from 1), its image — one <img>…</img> block holding all
// its tiles and thumbnail when the frames are tiled (Request.ImagesPerFrame) —, a line break
// (llm.InternVLFrameLabel; chat() writes <img><IMG_CONTEXT>×256·num_patches</img> per <image>).
func (r *Runtime) internVLPieces(req *llm.Request, own *owned) ([]piece, error) {
	nl, err := r.model.tokenize(llm.InternVLFrameEnd, false, false)
	if err != nil {
		return nil, err
	}
	per := req.Images()
	var out []piece
	for i := range len(req.Frames) / per {
		label := llm.InternVLFrameLabel(i)
		pre, err := r.model.tokenize(label, false, false)
		if err != nil {
			return nil, err
		}
		var block []piece
		for k := range per {
			f := req.Frames[i*per+k]
			tile, err := r.toTile(f)
			if err != nil {
				return nil, llm.Errorf("answer", r.mmproj, llm.ErrBadImage, "frame %d (%dx%d): %v", i*per+k, f.W, f.H, err)
			}
			ps, err := r.framePieces(tile, i*per+k, own)
			if err != nil {
				return nil, err
			}
			block = append(block, tilePieces(ps, k == 0, k == per-1)...)
		}
		block[firstVisual(block)].group.Prefix = label
		out = append(append(append(out, piece{text: pre}), block...), piece{text: nl})
	}
	return out, nil
}

// tilePieces keeps of one tile's pieces (mtmd's "<img>", the image, "</img>") the opening marker
// only for the first tile and the closing one only for the last, so a frame's tiles share one block.
func tilePieces(ps []piece, first, last bool) []piece {
	v := firstVisual(ps)
	end := v + 1
	for end < len(ps) && ps[end].visual() {
		end++
	}
	start, stop := v, end
	if first {
		start = 0
	}
	if last {
		stop = len(ps)
	}
	return ps[start:stop]
}

// framePieces tokenizes frame i as an image: the family's marker text and the image chunk(s).
func (r *Runtime) framePieces(f *rgb.Image, i int, own *owned) ([]piece, error) {
	fr, err := r.mtmd.tokenizeFrame(f, nil)
	if err != nil {
		return nil, llm.Errorf("answer", r.mmproj, llm.ErrBadImage, "frame %d (%dx%d): %v", i, f.W, f.H, err)
	}
	own.frames = append(own.frames, fr)
	var out []piece
	for k, c := range fr.chunks {
		switch c.typ {
		case chunkText:
			out = append(out, piece{text: c.tokens})
		case chunkImage:
			out = append(out, piece{frame: fr, chunk: k, nTok: c.nTok, gridW: c.gridW, gridH: c.gridH,
				group: llm.VisualGroup{Frames: []int{i}}})
		default:
			return nil, fmt.Errorf("frame %d: mtmd chunk of type %d", i, c.typ)
		}
	}
	return out, nil
}

func firstVisual(ps []piece) int {
	for i, p := range ps {
		if p.visual() {
			return i
		}
	}
	return 0
}

// toTile resizes a frame to the projector's tile (image_size²) with Pillow's bicubic filter, as
// InternVL's load_video does; a frame already that size is returned as is.
func (r *Runtime) toTile(f *rgb.Image) (*rgb.Image, error) {
	if r.tile <= 0 || (f.W == r.tile && f.H == r.tile) {
		return f, nil
	}
	p, err := native.NewPlan(native.Bicubic, f.W, f.H, r.tile, r.tile)
	if err != nil {
		return nil, err
	}
	dst := rgb.New(r.tile, r.tile)
	if err := p.Resample(dst, f); err != nil {
		return nil, err
	}
	return dst, nil
}
