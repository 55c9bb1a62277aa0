package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/rgb"
)

// TestInputFormsAndFPSWarning: every route says which form the server received (image_url parts,
// vLLM's video/jpeg item); the vLLM item notes when the fps sent to the processor differs from the
// one transformers 5.x derives from the metadata sent (n / total_num_frames × fps), and only then.
func TestInputFormsAndFPSWarning(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) { io.WriteString(w, vllmReply) })
	fr := []*rgb.Image{frame(), frame(), frame(), frame()}
	idx := []int{0, 100, 200, 299}
	ts := []float64{0, 100.0 / 30, 200.0 / 30, 299.0 / 30}
	for _, c := range []struct {
		name, spec string
		timing     *llm.VideoTiming
		form, warn string // warn: "" for none, else a part of the one warning
	}{
		{"images", "", nil, llm.FormImageURL, ""},
		{"sampled", ",input=video", &llm.VideoTiming{TimestampsS: ts, Indices: idx, SourceFPS: 30, TotalFrames: 300}, llm.FormVLLMVideo, ""},
		{"given", ",input=video", &llm.VideoTiming{TimestampsS: ts, Indices: idx, SourceFPS: 30, TotalFrames: 300, SampleFPS: 2},
			llm.FormVLLMVideo, "derives fps 0.4 from the video metadata (4 / 300 × 30), not the 2 sent"},
		{"timestamps", ",input=video", &llm.VideoTiming{TimestampsS: ts}, llm.FormVLLMVideo, "(4 / 9968 × 1000), not the 0.301003 sent"},
	} {
		rt, err := llm.Registry{"openai": Open}.Open("openai:url=" + s.URL + "/v1,model=m" + c.spec)
		if err != nil {
			t.Fatal(err)
		}
		r := req4
		r.Frames, r.Video = fr, c.timing
		resp, err := rt.Answer(context.Background(), &r)
		rt.Close()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if resp.InputForm != c.form {
			t.Errorf("%s: input_form %q, want %q", c.name, resp.InputForm, c.form)
		}
		switch {
		case c.warn == "" && resp.VideoWarnings != nil:
			t.Errorf("%s: warnings %q, want none", c.name, resp.VideoWarnings)
		case c.warn != "" && (len(resp.VideoWarnings) != 1 || !strings.Contains(resp.VideoWarnings[0], c.warn)):
			t.Errorf("%s: warnings %q, want one naming %q", c.name, resp.VideoWarnings, c.warn)
		}
	}
}

// TestTiledFramesNoVideoItem: frames of several images each (tiles) have no server video item (the
// server tiles frames itself): input=video refuses them by name, fallback=images sends every tile as
// an image part, and input=images is unchanged.
func TestTiledFramesNoVideoItem(t *testing.T) {
	var parts int
	s := server(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		v := videoItem{}
		collectParts(body, &v)
		parts = v.imageParts
		io.WriteString(w, vllmReply)
	})
	r := req4
	r.Frames, r.ImagesPerFrame = []*rgb.Image{frame(), frame(), frame(), frame()}, 2
	r.Video = &llm.VideoTiming{TimestampsS: []float64{0, 0.5}, SourceFPS: 30, TotalFrames: 300, Indices: []int{0, 15}}
	for _, server := range []string{ServerVLLM, ServerSGLang} {
		_, err := client(t, s, Options{Input: llm.InputVideo, Server: server}).Answer(context.Background(), &r)
		if !errors.Is(err, llm.ErrVideoInput) || !strings.Contains(err.Error(), "2 tiles") {
			t.Errorf("%s, tiled frames as video: %v", server, err)
		}
		resp, err := client(t, s, Options{Input: llm.InputVideo, Server: server, FallbackImages: true}).Answer(context.Background(), &r)
		if err != nil || parts != 4 || resp.InputForm != llm.FormImageURL || len(resp.VideoWarnings) != 1 {
			t.Errorf("%s, fallback=images: %v, %d image parts, %+v", server, err, parts, resp)
		}
	}
	if resp, err := client(t, s, Options{}).Answer(context.Background(), &r); err != nil || parts != 4 || resp.InputForm != llm.FormImageURL {
		t.Errorf("input=images: %v, %d parts", err, parts)
	}
}
