package llm

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/framesweep/framesweep/internal/num"
)

func TestExtractVideoMME(t *testing.T) {
	cases := []struct{ in, want string }{
		{"A", "A"},
		{"  (C) the dog ", "C"},
		{"The best answer is B.", "B"},
		{"The answer is D", "D"},
		// case-sensitive first [ABCD] anywhere: "According" yields A, as the official script does
		{"According to the video, C", "A"},
		// concatenated prefixes (missing commas in the source) are deleted as one string only
		{"The best option isThe correct option is C", "C"},
		{"Best answer:Best option: D", "D"},
		{"Best answer: D", "B"}, // "Best answer:" alone is not a prefix: B of "Best" wins
		{"Option: B", "B"},
		{"The correct option B", "B"},
		{"", ""},
		{"no letters here at all in this rather long reply of more than ten words", ""},
		{"e", ""},
		{"the cat is on the mat and it is very very happy D", "D"},
	}
	for _, c := range cases {
		if got := ExtractVideoMME(c.in); got != c.want {
			t.Errorf("ExtractVideoMME(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestExtractMLVU(t *testing.T) {
	letters := []string{"A", "B", "C", "D", "E", "F"}
	cases := []struct{ in, want string }{
		{"B) a cat", "B"},
		{"B", "B"},
		{" B", ""},     // no strip: check_ans compares exactly
		{"B.", ""},     // no ')' so the whole prediction must equal the letter
		{")", ""},      // pred[-1:0] is empty
		{"(C) x", "C"}, // char before the first ')'
		{"F) six options", "F"},
		{"G) not an option", ""},
		{"xyz) ", ""}, // "z" is not an option letter
	}
	for _, c := range cases {
		if got := ExtractMLVU(c.in, letters); got != c.want {
			t.Errorf("ExtractMLVU(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestExtractGeneric(t *testing.T) {
	letters := []string{"A", "B", "C"}
	cases := []struct{ in, want string }{
		{"B", "B"}, {"(C) blue", "C"}, {"A. red", "A"}, {"I think it is B.", "B"},
		{"Answer: C", "C"}, {"D", ""}, {"nothing", ""}, {"According to it", ""},
	}
	for _, c := range cases {
		if got := ExtractGeneric(c.in, letters); got != c.want {
			t.Errorf("ExtractGeneric(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRenderTemplates(t *testing.T) {
	r := &Request{Question: "What color is the car?", Options: []string{"A. red", "B. blue", "C. green", "D. black"}}
	p, tpl, err := Render(&Request{Question: r.Question, Options: r.Options, Template: TemplateVideoMME})
	if err != nil || tpl.ID != TemplateVideoMME {
		t.Fatal(err, tpl.ID)
	}
	want := "Select the best answer to the following multiple-choice question based on the video. Respond with only the letter (A, B, C, or D) of the correct option.\nWhat color is the car?\nA. red\nB. blue\nC. green\nD. black\nThe best answer is:"
	if p.User != want || p.System != "" || p.AssistantPrefix != "" {
		t.Errorf("videomme prompt:\n%q\nwant\n%q", p.User, want)
	}
	p, _, _ = Render(&Request{Question: r.Question, Options: r.Options, Template: TemplateVideoMME, Subtitles: "hello\nworld"})
	if !strings.HasPrefix(p.User, "This video's subtitles are listed below:\nhello\nworld\nSelect") {
		t.Errorf("subtitles prefix: %q", p.User)
	}
	// MLVU: options re-labelled "(A) text", unlabelled options get positional letters.
	p, _, _ = Render(&Request{Question: "Q?", Options: []string{"red", "blue"}, Template: TemplateMLVU})
	if p.User != "Question: Q?\nOptions:\n(A) red\n(B) blue\nOnly give the best option." || p.System != MLVUSystem || p.AssistantPrefix != "Best Option: (" {
		t.Errorf("mlvu prompt: %+v", p)
	}
	p, tpl, _ = Render(&Request{Question: "Q?", Options: []string{"(A) x", "(B) y"}})
	if tpl.ID != TemplateGeneric || p.User != "Q?\nA. x\nB. y\nAnswer with the option's letter from the given choices directly." {
		t.Errorf("generic prompt: %q", p.User)
	}
	if _, _, err := Render(&Request{Question: "Q", Template: "nope"}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("unknown template: %v", err)
	}
}

func TestLetterProbs(t *testing.T) {
	letters := []string{"A", "B", "C"}
	// variants add: A has two variants each with logprob log(0.2) -> 0.4 total, B 0.4, C missing -> 0.
	p := LetterProbs(map[string][]float64{"A": {math.Log(0.2), math.Log(0.2)}, "B": {math.Log(0.4)}}, letters)
	if math.Abs(p["A"]-0.5) > 1e-12 || math.Abs(p["B"]-0.5) > 1e-12 || p["C"] != 0 {
		t.Errorf("probs %v", p)
	}
	var sum float64
	for _, v := range LetterProbs(map[string][]float64{"A": {3}, "B": {1}, "C": {-2}}, letters) {
		sum += v
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("sum %v", sum)
	}
	if LetterProbs(map[string][]float64{"Z": {0}}, letters) != nil {
		t.Error("no option scored: want nil")
	}
}

func TestSpecAndRegistry(t *testing.T) {
	sp, err := ParseSpec("openai:url=http://127.0.0.1:8000/v1,model=qwen,concurrency=4")
	if err != nil || sp.Engine != "openai" || sp.Params["model"] != "qwen" {
		t.Fatal(sp, err)
	}
	if n, err := sp.Int("concurrency", 1, 1, 1024); n != 4 || err != nil {
		t.Error(n, err)
	}
	// Numeric keys have a range and say it, naming the key; NaN and ±Inf are refused by name.
	for spec, want := range map[string]string{
		"openai:concurrency=1000000000": "openai: concurrency=1000000000: out of range (want 1..1024)",
		"openai:concurrency=x":          `openai: concurrency="x": not an integer (want 1..1024)`,
		"openai:concurrency=0":          "openai: concurrency=0: out of range (want 1..1024)",
	} {
		sp, _ := ParseSpec(spec)
		if _, err := sp.Int("concurrency", 4, 1, 1024); !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
	for spec, want := range map[string]string{"x:f=NaN": "x: f=NaN: not a number", "x:f=-Inf": "x: f=-Inf: not finite", "x:f=3": "x: f=3: out of range (want 0..2)"} {
		sp, _ := ParseSpec(spec)
		if _, err := sp.Float("f", 0, num.In(0, 2)); !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
	if err := sp.Check([]string{"url", "model"}); !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), "concurrency") {
		t.Errorf("unknown key not reported: %v", err)
	}
	for _, bad := range []string{"", ":x=1", "onnx:model", "onnx:a=1,a=2"} {
		if _, err := ParseSpec(bad); !errors.Is(err, ErrBadSpec) {
			t.Errorf("ParseSpec(%q) err = %v", bad, err)
		}
	}
	reg := Registry{"x": func(s Spec) (Runtime, error) { return nil, Errorf("open", s.Params["p"], ErrModel, "") }}
	_, err = reg.Open("x:p=/m.gguf")
	var e *Error
	if !errors.As(err, &e) || e.Path != "/m.gguf" || !errors.Is(err, ErrModel) {
		t.Errorf("registry open: %v", err)
	}
	if _, err := reg.Open("y:"); !errors.Is(err, ErrUnknownEngine) {
		t.Errorf("unknown engine: %v", err)
	}
}

func TestRequestValidate(t *testing.T) {
	if err := (&Request{Question: "q", Options: []string{"A. x", "A. y"}}).Validate(); !errors.Is(err, ErrBadRequest) {
		t.Errorf("duplicate letters: %v", err)
	}
	if err := (&Request{Question: "q", Options: []string{"A. x"}}).Validate(); err != nil {
		t.Error(err)
	}
	if err := (&Request{}).Validate(); !errors.Is(err, ErrBadRequest) {
		t.Error("empty question accepted")
	}
	// Decoding settings have a range; NaN was once silently greedy.
	for _, r := range []Request{{Temperature: math.NaN()}, {Temperature: -1}, {Temperature: math.Inf(1)}, {Temperature: 2.5}, {MaxTokens: -1}, {MaxTokens: MaxMaxTokens + 1}} {
		r.Question, r.Options = "q", []string{"A. x"}
		if err := r.Validate(); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "(want 0..") {
			t.Errorf("temperature %v, max tokens %d: %v", r.Temperature, r.MaxTokens, err)
		}
	}
}

func TestTokenLetter(t *testing.T) {
	for tok, want := range map[string]string{"A": "A", " B": "B", "(C": "C", "D.": "D", " E)": "E", "A:": "A",
		"a": "", "AB": "", "  ": "", "(": "", " The": "", "\n\nA": "A", "      A": ""} {
		if got := TokenLetter(tok); got != want {
			t.Errorf("TokenLetter(%q) = %q, want %q", tok, got, want)
		}
	}
}
