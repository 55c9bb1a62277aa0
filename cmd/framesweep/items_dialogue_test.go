package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestItemsImportDialogueCLI: `items import avsd` writes dialogue items (every turn with --turns all)
// and `items import mlvu-gen` generation items; the AVSD flags are refused with another format or a
// bad value.
func TestItemsImportDialogueCLI(t *testing.T) {
	dir := t.TempDir()
	videos := filepath.Join(dir, "videos")
	if err := os.MkdirAll(videos, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"3MSZA.mp4", "m.mp4"} {
		if err := os.WriteFile(filepath.Join(videos, v), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	avsd := filepath.Join(dir, "valid_set4DSTC7-AVSD.json")
	gen := filepath.Join(dir, "9_summary.json")
	for p, body := range map[string]string{
		avsd: `{"dialogs": [{"image_id": "3MSZA", "dialog": [{"question": "who ?", "answer": "a man ."}, {"question": "what ?", "answer": "he runs ."}]}]}`,
		gen:  `[{"video": "m.mp4", "question": "Summarise the video.", "answer": "A man runs home.", "question_type": "summary"}]`,
	} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "items.jsonl")
	rc, stdout, errs := runAuditCLI("items", "import", "avsd", avsd, "--video-dir", videos, "--out", out, "--turns", "all")
	b, _ := os.ReadFile(out)
	if rc != exitOK || !strings.Contains(stdout, `"items": 2`) || !strings.Contains(string(b), `"history":[{"question":"who ?","answer":"a man ."}]`) {
		t.Fatalf("avsd: rc %d %s %s\n%s", rc, stdout, errs, b)
	}
	rc, _, errs = runAuditCLI("items", "import", "mlvu-gen", gen, "--video-dir", videos, "--out", out)
	b, _ = os.ReadFile(out)
	if rc != exitOK || !strings.Contains(string(b), `"answer":"A man runs home.","task":"mlvu/summary"`) {
		t.Fatalf("mlvu-gen: rc %d %s\n%s", rc, errs, b)
	}
}
