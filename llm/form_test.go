package llm

import (
	"strings"
	"testing"
)

// TestFPSWarning: the fps transformers 5.x derives from the metadata (n / total × source fps), and
// the note a record carries when the fps sent differs from it (the example: 16 frames of 310
// at 30 fps give 1.548, while a preset's sample_fps of 2 is sent).
func TestFPSWarning(t *testing.T) {
	if got := MetadataFPS(16, 310, 30); got != 16.0/310*30 {
		t.Errorf("MetadataFPS = %v", got)
	}
	for _, z := range [][3]float64{{0, 310, 30}, {16, 0, 30}, {16, 310, 0}} {
		if MetadataFPS(int(z[0]), int(z[1]), z[2]) != 0 {
			t.Errorf("MetadataFPS%v != 0", z)
		}
	}
	w := FPSWarning(2, 16, 310, 30)
	for _, want := range []string{"transformers 5.x", "1.54839", "16 / 310 × 30", "not the 2 sent", "Qwen2.5-VL"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q lacks %q", w, want)
		}
	}
	for _, none := range []string{FPSWarning(16.0/310*30, 16, 310, 30), FPSWarning(2, 16, 0, 30), FPSWarning(0, 16, 310, 30)} {
		if none != "" {
			t.Errorf("warning %q where the two agree or the metadata is incomplete", none)
		}
	}
}

// TestFinishInputForm: frames a runtime fed as images without naming the form are FormImages; a
// named form and text-only responses are left alone.
func TestFinishInputForm(t *testing.T) {
	tpl, _ := TemplateByID("")
	for _, c := range []struct{ mode, form, want string }{
		{InputImages, "", FormImages}, {InputImages, FormImageURL, FormImageURL}, {InputVideo, FormVLLMVideo, FormVLLMVideo}, {"", "", ""},
	} {
		r := &Response{InputMode: c.mode, InputForm: c.form}
		Finish(r, &Request{Question: "q"}, tpl)
		if r.InputForm != c.want {
			t.Errorf("mode %q form %q: %q, want %q", c.mode, c.form, r.InputForm, c.want)
		}
	}
}
