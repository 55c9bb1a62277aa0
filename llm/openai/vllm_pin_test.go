package openai

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/rgb"
)

// pinFrames are n deterministic 32×24 frames (no test data needed): the pin below is about the
// request's bytes, which must not change.
func pinFrames(n int) []*rgb.Image {
	out := make([]*rgb.Image, n)
	for k := range out {
		m := rgb.New(32, 24)
		for i := range m.Pix {
			m.Pix[i] = byte(i*13 + k*29)
		}
		out[k] = m
	}
	return out
}

// TestVLLMFormPinned: the vLLM video item (input=video, server=vllm, the default) is byte-identical
// to the form pinned before the SGLang form was reworked (issue 33): the sha256 of the whole request
// body for the same spec and request. A change here changes what every vLLM server receives.
func TestVLLMFormPinned(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) { io.WriteString(w, vllmReply) })
	plan := func(n int) *llm.VideoTiming {
		v := &llm.VideoTiming{SourceFPS: 30, TotalFrames: 300}
		for i := range n {
			x := i * 299 / (n - 1)
			v.Indices = append(v.Indices, x)
			v.TimestampsS = append(v.TimestampsS, float64(x)/30)
		}
		return v
	}
	for _, c := range []struct {
		name, spec string
		n          int
		video      *llm.VideoTiming
		want       string
	}{
		{"default", ",input=video", 16, plan(16), "632efb0b76d4dcfbe864752c55434a043afd72feebf5d181ebff44cc848bbe65"},
		{"quality", ",input=video,server=vllm,quality=80", 15, plan(15), "a3186907a61dded93d4adc3ceb860b2fe749d770e42fe68f64e01429e4fa8814"},
		{"sample_fps", ",input=video", 8, func() *llm.VideoTiming { v := plan(8); v.SampleFPS = 2; return v }(), "df4fe57ab942d50c2c03981306cda5fbad87057396336d49ffa718d7deb16ec2"},
		{"timestamps", ",input=video", 4, &llm.VideoTiming{TimestampsS: []float64{0, 0.5, 1.25, 2}}, "329ba289e23cdb6b9835b4553af975764bbb5a6d263a03d25af7616a5fdaeb33"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt, err := llm.Registry{"openai": Open}.Open("openai:url=" + s.URL + "/v1,model=Qwen/Qwen2.5-VL-7B-Instruct" + c.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			r := req4
			r.Frames, r.Video, r.Seed = pinFrames(c.n), c.video, 7
			resp, err := rt.Answer(context.Background(), &r)
			if err != nil {
				t.Fatal(err)
			}
			if resp.RequestSHA256 != c.want {
				t.Errorf("request body sha256 %s, pinned %s", resp.RequestSHA256, c.want)
			}
		})
	}
}
