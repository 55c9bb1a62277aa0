package openai

import (
	"errors"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/llm"
)

// FuzzOpenSpec: the openai runtime's spec (url, model, image_format, quality, concurrency, timeout, …)
// is parsed without network access; whatever the spec, Open never panics, refuses with a one-line
// ErrBadSpec, or returns a client whose options are within their documented bounds.
func FuzzOpenSpec(f *testing.F) {
	for _, s := range []string{
		"openai:url=http://127.0.0.1:8080/v1,model=qwen2.5-vl",
		"openai:url=http://127.0.0.1:8000/v1,model=Qwen/Qwen2.5-VL-7B-Instruct,concurrency=8,timeout=60s,retries=0",
		"openai:url=https://h/v1,model=m,image_format=jpeg,quality=100,top_logprobs=0,prefill=off",
		"openai:url=http://h/v1,model=m,quality=90", "openai:url=ftp://h/v1,model=m", "openai:url=http://h/v1,model=m,image=png,image_format=png",
		"openai:url=http://h/v1,model=m,concurrency=99999999999999999999", "openai:url=http://h/v1,model=m,timeout=-1s",
		"openai:url=http://h/v1,model=m,input=video", "openai:url=http://h/v1,model=m,input=video,server=sglang,image_format=jpeg",
		"openai:url=http://h/v1,model=m,server=vllm", "openai:url=http://h/v1,model=m,input=video,quality=70",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rt, err := llm.Registry{"openai": Open}.Open(s)
		if err != nil {
			if !errors.Is(err, llm.ErrBadSpec) && !errors.Is(err, llm.ErrUnknownEngine) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Open(%q): %v (want a one-line ErrBadSpec)", s, err)
			}
			return
		}
		c := rt.(*Client)
		if o := c.o; o.Quality < 1 || o.Quality > 100 || o.Concurrency < 1 || o.Timeout <= 0 || o.Retries < 0 || (o.Image != "png" && o.Image != "jpeg") {
			t.Fatalf("Open(%q): options %+v", s, o)
		}
		// A video item's form fixes the encoding: JPEG for vLLM, PNG for SGLang.
		if o := c.o; o.Input == llm.InputVideo && (o.Server == ServerVLLM) != (o.Image == "jpeg") || o.Input != llm.InputVideo && o.Input != llm.InputImages {
			t.Fatalf("Open(%q): input %q server %q image %q", s, o.Input, o.Server, o.Image)
		}
		if err := rt.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
