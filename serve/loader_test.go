package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/internal/engine/worker"
	"github.com/framesweep/framesweep/loader"
	"github.com/framesweep/framesweep/loader/load"
	"github.com/framesweep/framesweep/pipeline"
)

// TestLoaderRequests: /v1/health lists the loaders; a "loader" request is answered through the
// engine (the object is what Plan + Run build for the same config, its frames exactly what the
// loader returns: lmms-eval's read_video frames, qwen-vl-utils' resized frames), /v1/plan reports the
// loader's positions and counts, and requests a loader cannot take are 400s.
func TestLoaderRequests(t *testing.T) {
	vids := testVideos(t)
	_, url := start(t, Config{Roots: []string{vids}, Window: -1})
	var h Health
	if err := json.Unmarshal(get(t, url, "/v1/health").body, &h); err != nil || fmt.Sprint(h.Loaders) != fmt.Sprint(loader.Names()) {
		t.Fatalf("health loaders %v (%v)", h.Loaders, err)
	}
	for _, c := range []struct {
		r   Request
		req loader.Request
	}{
		{Request{Video: "nasa_13013.mp4", Loader: "lmms-eval", Frames: 8}, loader.Request{Frames: 8}},
		{Request{Video: "bear-vp9-odd-dimensions.webm", Loader: "lmms-eval", Frames: 8}, loader.Request{Frames: 8}},
		{Request{Video: "nasa_13013.mp4", Loader: "qwen-vl-utils", Frames: 4, ImagePatchSize: 16}, loader.Request{Frames: 4, ImagePatchSize: 16}},
	} {
		path := filepath.Join(vids, c.r.Video)
		want := direct(t, path, c.r)
		res := post(t, url, "/v1/frames", c.r)
		fr, meta := framesOf(t, res)
		lr, errs, err := pipeline.RunLoader(context.Background(), pipeline.VideoRef{Path: path}, c.r.Loader, []loader.Request{c.req}, load.Options{})
		if err != nil || errs[0] != nil {
			t.Fatal(err, errs)
		}
		var loaded []byte
		for _, f := range lr[0].Frames {
			img := f.Image
			if f.Resized != nil {
				img = f.Resized
			}
			loaded = append(loaded, img.Packed()...)
		}
		if !bytes.Equal(res.body, want.Bytes()) || !bytes.Equal(fr.Data, loaded) || meta["loader"] != c.r.Loader || res.header.Get("X-Framesweep-Loader") != c.r.Loader {
			t.Fatalf("%+v: the served object is not the engine's loader object (loader %q, header %q)", c.r, meta["loader"], res.header.Get("X-Framesweep-Loader"))
		}
		var p PlanResponse
		if err := json.Unmarshal(post(t, url, "/v1/plan", c.r).body, &p); err != nil || p.Key != meta["key"] || p.LoaderResult == nil ||
			fmt.Sprint(p.Indices) != fmt.Sprint(lr[0].Positions()) || p.TotalFrames != lr[0].Count || p.Loader != c.r.Loader || p.StreamIndex != lr[0].StreamIndex {
			t.Fatalf("plan %+v: %v", p, err)
		}
	}
	for name, c := range map[string]struct {
		r    Request
		code int
	}{
		"loader and preset": {Request{Video: "nasa_13013.mp4", Loader: "lmms-eval", Preset: "lmms-eval", Frames: 8}, 400},
		"stream":            {Request{Video: "nasa_13013.mp4", Loader: "lmms-eval", Frames: 8, Stream: new(int)}, 400},
		"cached":            {Request{Video: "nasa_13013.mp4", Loader: "vlmevalkit", Frames: 8, Pipeline: "cached"}, 400},
		"unknown":           {Request{Video: "nasa_13013.mp4", Loader: "decord", Frames: 8}, 400},
		"pixels, preset":    {Request{Video: "nasa_13013.mp4", Preset: "qwen3-vl", Frames: 8, MaxPixels: 1000}, 400},
		"pixels, lmms-eval": {Request{Video: "nasa_13013.mp4", Loader: "lmms-eval", Frames: 8, MaxPixels: 1000}, 400},
		"upstream raises":   {Request{Video: "video_90.mov", Loader: "qwen-vl-utils", Frames: 8}, 422},
	} {
		if res := post(t, url, "/v1/frames", c.r); res.status != c.code {
			t.Errorf("%s: %d %s, want %d", name, res.status, res.body, c.code)
		} else if e := res.errBody(t); c.code == 422 && e.Code != CodeUnplannable {
			t.Errorf("%s: code %s", name, e.Code)
		}
	}
	// A server that decodes in worker processes cannot run a loader (it reads packets in file order).
	// It says so before opening anything, and lists no loaders.
	_, wurl := start(t, Config{Roots: []string{vids}, Window: -1, Worker: &worker.Limits{}})
	if res := post(t, wurl, "/v1/frames", Request{Video: "nasa_13013.mp4", Loader: "lmms-eval", Frames: 8}); res.status != http.StatusBadRequest {
		t.Fatalf("--worker: %d %s", res.status, res.body)
	}
	if err := json.Unmarshal(get(t, wurl, "/v1/health").body, &h); err != nil || h.Loaders == nil || len(h.Loaders) != 0 {
		t.Fatalf("--worker: health loaders %v (%v)", h.Loaders, err)
	}
}
