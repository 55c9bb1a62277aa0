package openai

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"image/png"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/grid"
	"github.com/framesweep/framesweep/internal/piloracle"
	"github.com/framesweep/framesweep/pipeline"
	"github.com/framesweep/framesweep/sampler"
)

// TestConsumesEngineFrames: what the server receives is exactly the engine's frames tensor, whose
// sha256 a sweep records as input_sha256: the PNG image parts of the request, decoded and laid end to
// end in request order, hash to the object's DataSHA256 — for plain frames and for a tiled layout
// (tiles then thumbnail, each its own image part).
func TestConsumesEngineFrames(t *testing.T) {
	ctx := context.Background()
	var received []byte
	s := server(t, func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		received = received[:0]
		for _, p := range body["messages"].([]any)[0].(map[string]any)["content"].([]any) {
			iu, ok := p.(map[string]any)["image_url"]
			if !ok {
				continue
			}
			b64 := strings.TrimPrefix(iu.(map[string]any)["url"].(string), "data:image/png;base64,")
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Error(err)
				return
			}
			im, err := png.Decode(bytes.NewReader(raw))
			if err != nil {
				t.Error(err)
				return
			}
			received = append(received, piloracle.FromImage(im).Packed()...)
		}
		io.WriteString(w, vllmReply)
	})
	c := client(t, s, Options{})
	v, src, err := pipeline.OpenVideo(ctx, pipeline.VideoRef{Path: filepath.Join("..", "..", "testdata", "videos", "nasa_13013.mp4")}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, res := range []string{"64x36", "lmms-eval/internvl3"} {
		cfg, err := grid.One("uniform", sampler.Request{Frames: 3}, res, "")
		if err != nil {
			t.Fatal(err)
		}
		jobs, fails, err := pipeline.PlanJobs(v, []grid.Config{cfg}, pipeline.Options{})
		if err != nil || len(fails) > 0 {
			t.Fatal(err, fails)
		}
		var obj *pipeline.Object
		if _, jerrs, err := pipeline.Run(ctx, v, src, jobs, &pipeline.MemorySink{Done: func(o *pipeline.Object) error { obj = o; return nil }}); err != nil || len(jerrs) > 0 {
			t.Fatal(err, jerrs)
		}
		in, err := obj.Input() // what the sweep hands a runtime: the object's frames
		if err != nil {
			t.Fatal(err)
		}
		r := req4
		r.Frames = in.Frames
		if _, err := c.Answer(ctx, &r); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(received)
		if got := hex.EncodeToString(sum[:]); got != obj.DataSHA256 || len(in.Frames) != 3*obj.Result.Job.Images {
			t.Errorf("%s: the server received %d images, %d bytes hashing to %s; the engine's tensor (input_sha256) is %s", res, len(in.Frames), len(received), got, obj.DataSHA256)
		}
	}
}
