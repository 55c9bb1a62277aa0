package openai

import (
	"context"
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
