package portable

import (
	"path/filepath"
	"testing"
)

func TestRel(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		p, want string
		ok      bool
	}{
		{filepath.Join(root, "clips", "a.mp4"), "clips/a.mp4", true},
		{filepath.Join(root, "a.mp4"), "a.mp4", true},
		{filepath.Join(root, "..", "b.mp4"), "../b.mp4", true},
	} {
		if got, ok := Rel(root, c.p); got != c.want || ok != c.ok {
			t.Errorf("Rel(%s) = %q %v, want %q %v", c.p, got, ok, c.want, c.ok)
		}
	}
}

func TestSpec(t *testing.T) {
	files := map[string]string{"model": "aa", "mmproj": "bb"}
	for raw, want := range map[string]string{
		"llamacpp:model=/home/u/m/q.gguf,mmproj=/home/u/m/p.gguf,threads=1": "llamacpp:model=q.gguf,mmproj=p.gguf,threads=1",
		"llamacpp:model=rel/q.gguf":                                         "llamacpp:model=q.gguf",
		"onnx:model=m.onnx,lib=/usr/lib/libonnxruntime.so.1":                "onnx:model=m.onnx,lib=libonnxruntime.so.1",
		"openai:url=http://127.0.0.1:8080/v1,model=qwen2.5-vl":              "openai:url=http://127.0.0.1:8080/v1,model=qwen2.5-vl",
		"openai:url=http://h/v1,model=/srv/models/qwen":                     "openai:url=http://h/v1,model=qwen",
		"llamacpp:": "llamacpp:",
	} {
		f := files
		if raw[:6] == "openai" {
			f = nil
		}
		if got := Spec(raw, f); got != want {
			t.Errorf("Spec(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"open /home/u/videos/a.mp4: no such file or directory": "open a.mp4: no such file or directory",
		`"/tmp/x/run/records.jsonl":3: bad`:                    `"records.jsonl":3: bad`,
		"server http://127.0.0.1:8080/v1 said 503":             "server http://127.0.0.1:8080/v1 said 503",
		"clips/a.mp4: 8 frames requested from 3":               "clips/a.mp4: 8 frames requested from 3",
		"decode failed at /data/v.mkv.":                        "decode failed at v.mkv.",
		"(see /a/b)":                                           "(see b)",
		"open ../../home/alice/v.mp4: no such file":            "open v.mp4: no such file",
		"read file:///home/u/run/records.jsonl: bad":           "read records.jsonl: bad",
		"clips/../x.mp4 and ./a.mp4 stay":                      "clips/../x.mp4 and ./a.mp4 stay",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Path("/home/u/run"); got != "run" {
		t.Errorf("Path = %q", got)
	}
	for p, want := range map[string]string{
		"out/run": "out/run", "clips/../a.mp4": "clips/../a.mp4", "../../home/alice/v.mp4": "v.mp4", "..": "..", "a/../../b.mp4": "b.mp4",
		"file:///home/u/run": "run", "FILE:///home/u/run/": "run", "file://host/srv/x.jsonl?raw=1": "x.jsonl", "s3://bucket/run": "s3://bucket/run",
	} {
		if got := Path(p); got != want {
			t.Errorf("Path(%q) = %q, want %q", p, got, want)
		}
	}
}
