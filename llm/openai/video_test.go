package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/framesweep/framesweep/internal/piloracle"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/internal/testsupport/testframes"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/rgb"
)

// The stand-in servers below parse a video item as the servers do (their code read from upstream,
// rewritten here; nothing of ours is reused):
//   - vLLM, vllm/multimodal/media/video.py, VideoMediaIO.load_base64: for media type "video/jpeg"
//     the payload is split at ',' (the first num_frames pieces, num_frames from media_io_kwargs,
//     default 32; -1 = all) and each piece decoded as a base64 JPEG; the metadata (fps default 1,
//     frames_indices default 0..n-1, total_num_frames default n, which must be ≥ n) comes from
//     media_io_kwargs.
// SGLang's loader and Qwen-VL processor are run as an oracle in sglang_test.go.

// videoItem is what a stand-in server read from a request.
type videoItem struct {
	frames        []image.Image
	fps           float64 // loader metadata fps
	indices       []int   // loader metadata frames_indices
	total         int
	processorFPS  float64 // mm_processor_kwargs.fps (0 when absent)
	doSample      any
	videoParts    int
	imageParts    int
	mediaIOKwargs bool
}

// qwen3Times is transformers' Qwen3VLProcessor._calculate_timestamps over the item's metadata:
// indices / fps, padded to even length, each pair averaged.
func (v *videoItem) qwen3Times() []float64 {
	ts := make([]float64, len(v.indices))
	for i, x := range v.indices {
		ts[i] = float64(x) / v.fps
	}
	if len(ts)%2 == 1 {
		ts = append(ts, ts[len(ts)-1])
	}
	out := make([]float64, len(ts)/2)
	for i := range out {
		out[i] = (ts[2*i] + ts[2*i+1]) / 2
	}
	return out
}

// parseVLLM reads a chat request the way vLLM's video/jpeg path does.
func parseVLLM(body map[string]any) (*videoItem, error) {
	v := &videoItem{fps: 1}
	url, err := collectParts(body, v)
	if err != nil {
		return nil, err
	}
	mime, data, ok := strings.Cut(strings.TrimPrefix(url, "data:"), ";base64,")
	if !strings.HasPrefix(url, "data:") || !ok || strings.ToLower(mime) != "video/jpeg" {
		return nil, fmt.Errorf("video url %.30q is not data:video/jpeg;base64", url)
	}
	kw := map[string]any{}
	if m, ok := body["media_io_kwargs"].(map[string]any); ok {
		v.mediaIOKwargs = true
		if k, ok := m["video"].(map[string]any); ok {
			kw = k
		}
	}
	numFrames := 32
	if n, ok := kw["num_frames"].(float64); ok {
		numFrames = int(n)
	}
	pieces := strings.Split(data, ",")
	switch {
	case numFrames > 0 && len(pieces) > numFrames:
		pieces = pieces[:numFrames] // the silent cap
	case numFrames == 0:
		return nil, fmt.Errorf("num_frames must be greater than 0 or -1")
	}
	for _, p := range pieces {
		b, err := base64.StdEncoding.DecodeString(p)
		if err != nil {
			return nil, err
		}
		im, err := jpeg.Decode(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		v.frames = append(v.frames, im)
	}
	if f, ok := kw["fps"].(float64); ok {
		v.fps = f
	}
	v.total = len(v.frames)
	if t, ok := kw["total_num_frames"].(float64); ok {
		v.total = int(t)
	}
	if v.total < len(v.frames) {
		return nil, fmt.Errorf("total_num_frames (%d) must be >= number of frames sent (%d)", v.total, len(v.frames))
	}
	if idx, ok := kw["frames_indices"].([]any); ok {
		for _, x := range idx {
			v.indices = append(v.indices, int(x.(float64)))
		}
		if len(v.indices) != len(v.frames) {
			return nil, fmt.Errorf("frames_indices length (%d) must match number of frames sent (%d)", len(v.indices), len(v.frames))
		}
	} else {
		for i := range v.frames {
			v.indices = append(v.indices, i)
		}
	}
	if m, ok := body["mm_processor_kwargs"].(map[string]any); ok {
		v.processorFPS, _ = m["fps"].(float64)
		v.doSample = m["do_sample_frames"]
	}
	return v, nil
}

// collectParts counts the user turn's parts and returns the one video item's URL.
func collectParts(body map[string]any, v *videoItem) (string, error) {
	var url string
	for _, m := range body["messages"].([]any) {
		parts, ok := m.(map[string]any)["content"].([]any)
		if !ok {
			continue
		}
		for _, p := range parts {
			pm := p.(map[string]any)
			switch pm["type"] {
			case "video_url":
				v.videoParts++
				url = pm["video_url"].(map[string]any)["url"].(string)
			case "image_url":
				v.imageParts++
			}
		}
	}
	if v.videoParts != 1 || v.imageParts != 0 {
		return "", fmt.Errorf("%d video and %d image parts, want one video item", v.videoParts, v.imageParts)
	}
	return url, nil
}

// standIn starts a server that parses each request with parse and keeps what it read.
func standIn(t *testing.T, parse func(map[string]any) (*videoItem, error)) (url string, last func() *videoItem) {
	var mu sync.Mutex
	var got *videoItem
	s := server(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		v, err := parse(body)
		if err != nil {
			w.WriteHeader(400)
			b, _ := json.Marshal(map[string]any{"object": "error", "message": err.Error(), "code": 400})
			w.Write(b)
			return
		}
		mu.Lock()
		got = v
		mu.Unlock()
		io.WriteString(w, vllmReply)
	})
	return s.URL + "/v1", func() *videoItem { mu.Lock(); defer mu.Unlock(); return got }
}

// planFrames: n real frames of the bbb test video (30 fps) at uniformly spaced indices (numpy
// linspace(0, 119, n) floored), with their timing as a sampler's plan gives it (t = index / fps).
func planFrames(t *testing.T, n int) ([]*rgb.Image, *llm.VideoTiming) {
	t.Helper()
	video := testenv.SharedVideo(t, testframes.Video)
	const total, fps = 120, 30.0 // the clip: 4 s at 30 fps
	idx := make([]int, n)
	ts := make([]float64, n)
	for i := range idx {
		idx[i] = int(float64(i) * float64(total-1) / float64(n-1))
		ts[i] = float64(idx[i]) / fps
	}
	fr, err := testframes.Extract(video, idx, 64, 48)
	if err != nil {
		t.Fatal(err)
	}
	return fr, &llm.VideoTiming{TimestampsS: ts, Indices: idx, SourceFPS: fps, TotalFrames: total}
}

// psnr is the peak signal-to-noise ratio (dB) of a decoded frame against the frame sent.
func psnr(sent *rgb.Image, got image.Image) float64 {
	g := piloracle.FromImage(got)
	a, b := sent.Packed(), g.Packed()
	var se float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		se += d * d
	}
	if se == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(255*255/(se/float64(len(a))))
}

// TestVideoItemVLLM: input=video (server vllm, the default) sends the exact frames as one
// data:video/jpeg item that vLLM's loader splits back into all of them (40 frames: past the
// loader's default cap of 32, lifted by the per-request num_frames), JPEG at the recorded quality,
// with the plan's timing: Qwen3-VL's timestamps computed from the metadata equal the plan's pair
// times, and the processor's fps is qwen-vl-utils' sample_fps.
func TestVideoItemVLLM(t *testing.T) {
	url, last := standIn(t, parseVLLM)
	for _, c := range []struct {
		n       int
		spec    string
		quality int
	}{{16, "", 95}, {15, ",quality=80", 80}, {40, ",server=vllm", 95}} {
		fr, timing := planFrames(t, c.n)
		rt, err := llm.Registry{"openai": Open}.Open("openai:url=" + url + ",model=m,input=video" + c.spec)
		if err != nil {
			t.Fatal(err)
		}
		r := req4
		r.Frames, r.Video = fr, timing
		resp, err := rt.Answer(context.Background(), &r)
		rt.Close()
		if err != nil {
			t.Fatalf("%d frames: %v", c.n, err)
		}
		v := last()
		if len(v.frames) != c.n {
			t.Fatalf("%d frames sent, the loader read %d", c.n, len(v.frames))
		}
		worst := math.Inf(1)
		for i, im := range v.frames {
			if b := im.Bounds(); b.Dx() != fr[i].W || b.Dy() != fr[i].H {
				t.Fatalf("frame %d: %v, sent %dx%d", i, b, fr[i].W, fr[i].H)
			}
			worst = min(worst, psnr(fr[i], im))
		}
		// Go's image/jpeg (4:2:0) on these 64×48 frames: worst frame measured 34.1 dB at q=95, 29.3 dB at q=80.
		floor := map[int]float64{95: 32, 80: 27}[c.quality]
		t.Logf("%d frames, JPEG q=%d: worst PSNR %.1f dB; prompt fps %.4f (%s)", c.n, c.quality, worst, resp.VideoFPS, resp.VideoFPSSource)
		if worst < floor {
			t.Errorf("JPEG q=%d: worst frame PSNR %.1f dB < %.0f", c.quality, worst, floor)
		}
		if resp.InputMode != llm.InputVideo || resp.ImageFormat != fmt.Sprintf("jpeg:q=%d", c.quality) {
			t.Errorf("response input_mode %q image_format %q", resp.InputMode, resp.ImageFormat)
		}
		if v.fps != 30 || v.total != 120 || fmt.Sprint(v.indices) != fmt.Sprint(timing.Indices) {
			t.Errorf("metadata fps %v total %d indices %v, want 30, 120, %v", v.fps, v.total, v.indices, timing.Indices)
		}
		want := llm.PairTimes(timing.TimestampsS)
		if got := v.qwen3Times(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Qwen3-VL pair times from the metadata %v, plan %v", got, want)
		}
		if sampleFPS := float64(c.n) / 120 * 30; v.processorFPS != sampleFPS || resp.VideoFPS != sampleFPS || v.doSample != false {
			t.Errorf("processor fps %v (response %v) do_sample_frames %v, want %v and false", v.processorFPS, resp.VideoFPS, v.doSample, sampleFPS)
		}
		if fmt.Sprint(resp.VideoTimestampsS) != fmt.Sprint(timing.TimestampsS) {
			t.Errorf("response timestamps %v, plan %v", resp.VideoTimestampsS, timing.TimestampsS)
		}
	}
	// Timestamps alone (no indices): frames_indices on a millisecond grid.
	fr, timing := planFrames(t, 8)
	c, err := New(url, "m", Options{Input: llm.InputVideo})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := req4
	r.Frames, r.Video = fr, &llm.VideoTiming{TimestampsS: timing.TimestampsS}
	resp, err := c.Answer(context.Background(), &r)
	if err != nil {
		t.Fatal(err)
	}
	if v := last(); v.fps != 1000 || v.indices[1] != int(math.Round(timing.TimestampsS[1]*1000)) || resp.VideoFPSSource != llm.FPSTimestamps {
		t.Errorf("timestamps only: fps %v indices %v source %q", v.fps, v.indices, resp.VideoFPSSource)
	}
	// Without timing the server would place the frames at 1 fps: refused.
	r.Video = nil
	if _, err := c.Answer(context.Background(), &r); !errors.Is(err, llm.ErrBadRequest) {
		t.Errorf("video without timing: %v, want ErrBadRequest", err)
	}
}

// TestVideoErrors: a server that does not take the video item answers in prose; the error is
// llm.ErrVideoInput on one line naming the server settings that govern it.
func TestVideoErrors(t *testing.T) {
	for name, c := range map[string]struct {
		status int
		body   string
		server string
		want   []string
	}{
		"no-video": {400, `{"object":"error","message":"At most 0 video(s) may be provided in one prompt. Set --limit-mm-per-prompt to increase this limit.","code":400}`,
			ServerVLLM, []string{"--limit-mm-per-prompt", "--media-io-kwargs", "input=images"}},
		"indices": {400, `{"object":"error","message":"frames_indices length (3) must match number of frames sent (2)","code":400}`,
			ServerVLLM, []string{"--media-io-kwargs"}},
		"qwen3-metadata": {500, qwen3Metadata500, ServerVLLM, []string{"--limit-mm-per-prompt"}},
		"sglang":         {400, `{"object":"error","message":"Invalid video: cannot decode","code":400}`, ServerSGLang, []string{"load_video", "input=images"}},
	} {
		t.Run(name, func(t *testing.T) {
			s := server(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			})
			cl := client(t, s, Options{Input: llm.InputVideo, Server: c.server, Retries: 1})
			fr := []*rgb.Image{frame(), frame()}
			r := req4
			r.Frames, r.Video = fr, &llm.VideoTiming{TimestampsS: []float64{0, 0.5}}
			_, err := cl.Answer(context.Background(), &r)
			if !errors.Is(err, llm.ErrVideoInput) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want ErrVideoInput on one line", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: does not name %s", err, w)
				}
			}
		})
	}
	// The same prose in images mode stays a too-many-images error.
	s := server(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		w.WriteHeader(400)
		io.WriteString(w, vllmTooManyImages)
	})
	r := req4
	r.Frames = []*rgb.Image{frame()}
	if _, err := client(t, s, Options{}).Answer(context.Background(), &r); !errors.Is(err, llm.ErrTooManyImages) {
		t.Errorf("images mode: %v", err)
	}
}

// TestVideoSpecs: the video keys are checked at open.
func TestVideoSpecs(t *testing.T) {
	base := "openai:url=http://127.0.0.1:1/v1,model=m"
	for _, bad := range []string{",server=vllm", ",input=clip", ",input=video,server=tgi", ",input=video,image_format=png",
		",input=video,server=sglang,image_format=jpeg", ",input=video,server=sglang,quality=90"} {
		if _, err := (llm.Registry{"openai": Open}).Open(base + bad); !errors.Is(err, llm.ErrBadSpec) {
			t.Errorf("spec %q: %v, want ErrBadSpec", bad, err)
		}
	}
	for spec, want := range map[string]string{"": "png", ",input=images": "png", ",input=video": "jpeg:q=95",
		",input=video,image_format=jpeg,quality=70": "jpeg:q=70", ",input=video,server=sglang": "png"} {
		rt, err := llm.Registry{"openai": Open}.Open(base + spec)
		if err != nil {
			t.Errorf("spec %q: %v", spec, err)
			continue
		}
		if got := rt.(*Client).ImageFormat(); got != want {
			t.Errorf("spec %q: image format %q, want %q", spec, got, want)
		}
		rt.Close()
	}
}
