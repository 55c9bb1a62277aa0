package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/framesweep/framesweep/decode"
	"github.com/framesweep/framesweep/encode"
	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/internal/testsupport/testframes"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/rgb"
)

// sglangResult is what testdata/sglang_load_video.py (SGLang's load_video branches and Qwen-VL
// preprocess_video, re-implemented from the cited upstream files) made of a video_url.
type sglangResult struct {
	Error             string    `json:"error"`
	Branch            string    `json:"branch"`
	TotalFrames       int       `json:"total_frames"`
	AvgFPS            float64   `json:"avg_fps"`
	TorchcodecFPS     float64   `json:"torchcodec_fps"`
	NFrames           int       `json:"nframes"`
	NFramesTorchcodec int       `json:"nframes_torchcodec"`
	IndicesRound      []int     `json:"indices_round"`
	IndicesTrunc      []int     `json:"indices_trunc_unique"`
	FramesShape       []int     `json:"frames_shape"`
	ResizeHW          []int     `json:"resize_hw"`
	Qwen3Timestamps   []float64 `json:"qwen3_timestamps"`
	frames            []byte
}

// runSGLangOracle runs the oracle over video_url strings, in one Python process.
func runSGLangOracle(t *testing.T, py string, urls ...string) []*sglangResult {
	t.Helper()
	dir := t.TempDir()
	files := make([]string, len(urls))
	for i, u := range urls {
		files[i] = filepath.Join(dir, fmt.Sprintf("url%d", i))
		if err := os.WriteFile(files[i], []byte(u), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(py, append([]string{"testdata/sglang_load_video.py"}, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("oracle: %v\n%s", err, out)
	}
	res := make([]*sglangResult, len(urls))
	for i, f := range files {
		b, err := os.ReadFile(f + ".json")
		if err != nil {
			t.Fatal(err)
		}
		res[i] = &sglangResult{}
		if err := json.Unmarshal(b, res[i]); err != nil {
			t.Fatal(err)
		}
		res[i].frames, _ = os.ReadFile(f + ".rgb")
	}
	return res
}

// sglangStandIn answers every request and keeps its video_url (or its image parts' count).
func sglangStandIn(t *testing.T) (url string, last func() (video string, images int)) {
	var mu sync.Mutex
	var got string
	var imgs int
	s := server(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		v := videoItem{}
		u, _ := collectParts(body, &v)
		mu.Lock()
		got, imgs = u, v.imageParts
		mu.Unlock()
		io.WriteString(w, vllmReply)
	})
	return s.URL + "/v1", func() (string, int) { mu.Lock(); defer mu.Unlock(); return got, imgs }
}

// twoFPS: n real frames of the bbb clip at 2 fps (every 15th of 30 fps), with their plan's timing.
func twoFPS(t *testing.T, n int) ([]*rgb.Image, *llm.VideoTiming) {
	t.Helper()
	video := testenv.SharedVideo(t, testframes.Video)
	idx := make([]int, n)
	ts := make([]float64, n)
	for i := range idx {
		idx[i], ts[i] = 15*i, float64(15*i)/30
	}
	fr, err := testframes.Extract(video, idx, 64, 48)
	if err != nil {
		t.Fatal(err)
	}
	return fr, &llm.VideoTiming{TimestampsS: ts, Indices: idx, SourceFPS: 30, TotalFrames: 120, SampleFPS: 2}
}

// TestSGLangLoadVideo: input=video,server=sglang sends what SGLang's current code reads. The
// request's video_url, run through SGLang's load_video branches and its Qwen-VL preprocess_video
// (testdata/sglang_load_video.py: re-implemented from python/sglang/srt/utils/common.py and
// python/sglang/srt/multimodal/processors/qwen_vl.py; PyAV stands in for decord), gives every frame
// back, PNG-exact, none re-sampled away (both index forms), at the rate and times the response
// records; the resize SGLang re-derives is the one the response names. The old "video:" form fails
// in the same loader (base64 validation), as the server answered it.
func TestSGLangLoadVideo(t *testing.T) {
	url, last := sglangStandIn(t)
	type sent struct {
		name  string
		fr    []*rgb.Image
		resp  *llm.Response
		video string
	}
	var cases []sent
	for _, name := range []string{"uniform 8", "2 fps 8"} {
		fr, timing := planFrames(t, 8)
		if name == "2 fps 8" {
			fr, timing = twoFPS(t, 8)
		}
		c, err := New(url, "m", Options{Input: llm.InputVideo, Server: ServerSGLang})
		if err != nil {
			t.Fatal(err)
		}
		r := req4
		r.Frames, r.Video = fr, timing
		resp, err := c.Answer(context.Background(), &r)
		c.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		video, images := last()
		if images != 0 || !strings.HasPrefix(video, "data:video/mp4;base64,") {
			t.Fatalf("%s: %d image parts, video url %.40q", name, images, video)
		}
		if resp.InputMode != llm.InputVideo || resp.InputForm != llm.FormSGLangVideo || resp.ImageFormat != "png" {
			t.Errorf("%s: input_mode %q input_form %q image_format %q", name, resp.InputMode, resp.InputForm, resp.ImageFormat)
		}
		checkMP4(t, name, video, fr, resp)
		cases = append(cases, sent{name, fr, resp, video})
	}
	// The form sent before (issue 33): "video:" + the PNG files back to back.
	var cat []byte
	for _, f := range cases[0].fr[:4] {
		b, err := llm.EncodePNG(f)
		if err != nil {
			t.Fatal(err)
		}
		cat = append(cat, b...)
	}
	// A file at 4 fps, which SGLang re-samples at 2 fps: the oracle must drop frames (it is not a
	// pass-through).
	fast, err := encode.PNGMP4(cases[0].fr, encode.Rate{Num: 4, Den: 1}, "")
	if err != nil {
		t.Fatal(err)
	}
	py := testenv.NeedPython(t, "av", "numpy", "torch")
	out := runSGLangOracle(t, py, cases[0].video, cases[1].video, "video:"+base64.StdEncoding.EncodeToString(cat),
		"data:video/mp4;base64,"+base64.StdEncoding.EncodeToString(fast))
	for k, c := range cases {
		o, n := out[k], len(c.fr)
		if o.Error != "" {
			t.Fatalf("%s: SGLang's loader fails: %s", c.name, o.Error)
		}
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		if o.Branch != "data" || o.TotalFrames != n || o.NFrames != n || o.NFramesTorchcodec != n ||
			!slices.Equal(o.IndicesRound, all) || !slices.Equal(o.IndicesTrunc, all) {
			t.Errorf("%s: branch %q, %d frames, keeps %d (torchcodec %d), indices %v / %v", c.name, o.Branch, o.TotalFrames, o.NFrames, o.NFramesTorchcodec, o.IndicesRound, o.IndicesTrunc)
		}
		if o.AvgFPS != c.resp.VideoFPS || fmt.Sprint(o.Qwen3Timestamps) != fmt.Sprint(c.resp.VideoTimestampsS) {
			t.Errorf("%s: server fps %v times %v, response %v %v", c.name, o.AvgFPS, o.Qwen3Timestamps, c.resp.VideoFPS, c.resp.VideoTimestampsS)
		}
		var want []byte
		for _, f := range c.fr {
			want = append(want, f.Packed()...)
		}
		if !bytes.Equal(o.frames, want) {
			t.Errorf("%s: the frames SGLang samples differ from the frames sent (shape %v)", c.name, o.FramesShape)
		}
		resize := fmt.Sprintf("%dx%d frame to %dx%d", c.fr[0].W, c.fr[0].H, o.ResizeHW[1], o.ResizeHW[0])
		if !slices.ContainsFunc(c.resp.VideoWarnings, func(w string) bool { return strings.Contains(w, resize) }) {
			t.Errorf("%s: warnings %q do not name SGLang's resize (%s)", c.name, c.resp.VideoWarnings, resize)
		}
		t.Logf("%s: %d frames at %v fps (%s); warnings %q", c.name, n, c.resp.VideoFPS, c.resp.VideoFPSSource, c.resp.VideoWarnings)
	}
	// SGLang's loader base64-decodes the whole old form with validation and fails.
	if o := out[2]; !strings.Contains(o.Error, "binascii") {
		t.Errorf("old video: form: loader says %q, want a base64 validation error", o.Error)
	}
	// 8 frames at 4 fps: smart_nframes keeps 4, torch.linspace(0, 7, 4).round() = 0 2 5 7, the
	// truncating form 0 2 4 7.
	if o := out[3]; o.NFrames != 4 || !slices.Equal(o.IndicesRound, []int{0, 2, 5, 7}) || !slices.Equal(o.IndicesTrunc, []int{0, 2, 4, 7}) {
		t.Errorf("8 frames at 4 fps: keeps %d, indices %v / %v", o.NFrames, o.IndicesRound, o.IndicesTrunc)
	}
}

// checkMP4 decodes the item with framesweep's own decoder (no Python): every frame exact, the count,
// the rate and the times the response records.
func checkMP4(t *testing.T, name, url string, fr []*rgb.Image, resp *llm.Response) {
	t.Helper()
	raw, err := base64.StdEncoding.Strict().DecodeString(strings.TrimPrefix(url, "data:video/mp4;base64,"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "item.mp4")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := decode.Open(path, decode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.NumFrames() != len(fr) || v.Info().FPS != resp.VideoFPS {
		t.Errorf("%s: the file holds %d frames at %v fps; sent %d, response fps %v", name, v.NumFrames(), v.Info().FPS, len(fr), resp.VideoFPS)
	}
	idx := make([]int, len(fr))
	for i := range idx {
		idx[i] = i
	}
	if _, err := v.Read(idx, func(f *decode.Frame) error {
		if !bytes.Equal(f.Image.Packed(), fr[f.Index].Packed()) {
			t.Errorf("%s: frame %d decodes otherwise than sent", name, f.Index)
		}
		if d := f.Seconds - resp.VideoTimestampsS[f.Index]; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: frame %d at %v s, response %v", name, f.Index, f.Seconds, resp.VideoTimestampsS[f.Index])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSGLangRefusals: frames SGLang would not keep are refused by name before anything is sent (an
// odd count, a rate above 2 fps, more than 768 frames, no timing); with fallback=images they go as
// image parts and the response says why. Frames SGLang keeps are never degraded to images.
func TestSGLangRefusals(t *testing.T) {
	url, last := sglangStandIn(t)
	tiny := func(n int, fps float64) ([]*rgb.Image, *llm.VideoTiming) {
		fr := make([]*rgb.Image, n)
		v := &llm.VideoTiming{}
		for i := range fr {
			fr[i] = frame()
			v.TimestampsS = append(v.TimestampsS, float64(i)/fps)
		}
		return fr, v
	}
	for name, c := range map[string]struct {
		n    int
		fps  float64
		want string
	}{
		"odd":       {15, 2, "keeps 14 of 15 frames"},
		"too fast":  {16, 3.75, "keeps 8 of 16 frames"},
		"too many":  {770, 1, "keeps 768 of 770 frames"},
		"one frame": {1, 1, "keeps 0 of 1"},
	} {
		fr, timing := c.n, c.fps
		frames, v := tiny(fr, timing)
		if c.n == 1 {
			v = &llm.VideoTiming{TimestampsS: []float64{0}, SampleFPS: 1}
		}
		for _, fallback := range []bool{false, true} {
			cl, err := New(url, "m", Options{Input: llm.InputVideo, Server: ServerSGLang, FallbackImages: fallback})
			if err != nil {
				t.Fatal(err)
			}
			r := req4
			r.Frames, r.Video = frames, v
			before, _ := last()
			resp, err := cl.Answer(context.Background(), &r)
			cl.Close()
			after, images := last()
			if !fallback {
				if !errors.Is(err, llm.ErrVideoInput) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "server=sglang") {
					t.Errorf("%s: %v, want ErrVideoInput naming %q", name, err, c.want)
				}
				if after != before {
					t.Errorf("%s: a refused request reached the server", name)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s, fallback=images: %v", name, err)
			}
			if images != c.n || resp.InputMode != llm.InputImages || resp.InputForm != llm.FormImageURL || resp.ImageFormat != "png" ||
				len(resp.VideoWarnings) != 1 || !strings.Contains(resp.VideoWarnings[0], "fallback=images") || !strings.Contains(resp.VideoWarnings[0], c.want) ||
				resp.VideoFPS != 0 || resp.VideoTimestampsS != nil {
				t.Errorf("%s, fallback=images: %d image parts, %+v", name, images, resp)
			}
		}
	}
	// No timing: refused (the file's rate is the only time SGLang reads); fallback applies too.
	cl, _ := New(url, "m", Options{Input: llm.InputVideo, Server: ServerSGLang})
	defer cl.Close()
	r := req4
	r.Frames = []*rgb.Image{frame(), frame()}
	if _, err := cl.Answer(context.Background(), &r); !errors.Is(err, llm.ErrVideoInput) || !strings.Contains(err.Error(), "timing") {
		t.Errorf("no timing: %v", err)
	}
	// Frames SGLang keeps go as the video even with fallback=images.
	fb, _ := New(url, "m", Options{Input: llm.InputVideo, Server: ServerSGLang, FallbackImages: true})
	defer fb.Close()
	frames, v := tiny(4, 2)
	r.Frames, r.Video = frames, v
	resp, err := fb.Answer(context.Background(), &r)
	if video, images := last(); err != nil || images != 0 || !strings.HasPrefix(video, "data:video/mp4") || resp.InputForm != llm.FormSGLangVideo ||
		slices.ContainsFunc(resp.VideoWarnings, func(w string) bool { return strings.Contains(w, "fallback") }) {
		t.Errorf("keepable frames with fallback=images: %v, %d image parts, %+v", err, images, resp)
	}
}
