package llm

import (
	"regexp"
	"strings"
)

// Template ids. Every Response carries the id of the template that rendered its prompt and parsed its answer.
const (
	TemplateVideoMME = "videomme" // Video-MME official prompt and extract_characters_regex
	TemplateMLVU     = "mlvu"     // MLVU choice_bench prompt (assistant prefilled "Best Option: (") and check_ans
	TemplateGeneric  = "generic"  // lmms-eval style post-prompt, lenient letter extraction
)

// TemplateIDs lists the known templates.
var TemplateIDs = []string{TemplateGeneric, TemplateMLVU, TemplateVideoMME}

// Prompt is a rendered prompt. Frames go at the start of the user turn (the "<video>" position).
type Prompt struct {
	System          string
	User            string
	AssistantPrefix string // text the assistant turn starts with (MLVU prefills "Best Option: (")
}

// Template renders a request into a prompt and extracts the chosen letter from the model's text.
type Template struct {
	ID      string
	Render  func(r *Request) Prompt
	Extract func(text string, letters []string) string
}

// TemplateByID returns the template for id ("" means generic).
func TemplateByID(id string) (Template, error) {
	switch id {
	case "", TemplateGeneric:
		return Template{ID: TemplateGeneric, Render: renderGeneric, Extract: ExtractGeneric}, nil
	case TemplateVideoMME:
		return Template{ID: TemplateVideoMME, Render: renderVideoMME, Extract: func(s string, _ []string) string { return ExtractVideoMME(s) }}, nil
	case TemplateMLVU:
		return Template{ID: TemplateMLVU, Render: renderMLVU, Extract: ExtractMLVU}, nil
	}
	return Template{}, Errorf("template", "", ErrBadRequest, "unknown template %q (known: %s)", id, strings.Join(TemplateIDs, ", "))
}

// Render returns the request's prompt (its own Prompt when set) and the template used.
func Render(r *Request) (Prompt, Template, error) {
	t, err := TemplateByID(r.Template)
	if err != nil {
		return Prompt{}, Template{}, err
	}
	if r.Prompt != nil {
		return *r.Prompt, t, nil
	}
	return withHistory(t.Render(r), r.History), t, nil
}

// Finish fills the template id and the extracted choice of a response, and FormImages as the input
// form of frames a runtime fed as images without naming the form.
func Finish(resp *Response, r *Request, t Template) {
	resp.Template = t.ID
	resp.Choice = t.Extract(resp.Text, Letters(r.Options))
	if resp.InputForm == "" && resp.InputMode == InputImages {
		resp.InputForm = FormImages
	}
}

// optionLines renders options as "A. text" lines (Video-MME, generic) or "(A) text" lines (MLVU).
func optionLines(opts []string, paren bool) []string {
	letters := Letters(opts)
	out := make([]string, len(opts))
	for i, o := range opts {
		_, text := splitOption(o)
		if paren {
			out[i] = "(" + letters[i] + ") " + text
		} else {
			out[i] = letters[i] + ". " + text
		}
	}
	return out
}

func renderVideoMME(r *Request) Prompt {
	var b strings.Builder
	if r.Subtitles != "" {
		b.WriteString("This video's subtitles are listed below:\n" + r.Subtitles + "\n")
	}
	b.WriteString("Select the best answer to the following multiple-choice question based on the video. " +
		"Respond with only the letter (A, B, C, or D) of the correct option.\n")
	b.WriteString(r.Question + "\n")
	for _, l := range optionLines(r.Options, false) {
		b.WriteString(l + "\n")
	}
	b.WriteString("The best answer is:")
	return Prompt{User: b.String()}
}

// MLVUSystem is MLVU choice_bench's system prompt.
const MLVUSystem = "Carefully watch this video and pay attention to every detail. Based on your observations, " +
	"select the best option that accurately addresses the question."

func renderMLVU(r *Request) Prompt {
	q := "Question: " + r.Question + "\nOptions:\n"
	for _, l := range optionLines(r.Options, true) {
		q += l + "\n"
	}
	// choice_bench strips the question block (str.rstrip()).
	q = strings.TrimRight(q, " \t\n\r\v\f")
	return Prompt{System: MLVUSystem, User: q + "\nOnly give the best option.", AssistantPrefix: "Best Option: ("}
}

func renderGeneric(r *Request) Prompt {
	if len(r.Options) == 0 {
		return Prompt{User: r.Question} // open-ended: no letter to ask for
	}
	var b strings.Builder
	b.WriteString(r.Question + "\n")
	for _, l := range optionLines(r.Options, false) {
		b.WriteString(l + "\n")
	}
	b.WriteString("Answer with the option's letter from the given choices directly.")
	return Prompt{User: b.String()}
}

// videoMMEPrefixes is the effective prefix list of Video-MME's eval_your_results.py: two missing commas
// in the source concatenate four of the entries into two. Order matters ("The answer is" before "The answer").
var videoMMEPrefixes = []string{
	"The best answer is",
	"The correct answer is",
	"The answer is",
	"The answer",
	"The best option isThe correct option is",
	"Best answer:Best option:",
	"Answer:",
	"Option:",
	"The correct answer",
	"The correct option",
}

var reABCD = regexp.MustCompile(`[ABCD]`)

// ExtractVideoMME is Video-MME's extract_characters_regex: strip, delete every prefix occurrence, give up
// on long answers without a letter, else return the FIRST [ABCD] anywhere (case-sensitive, so "According"
// yields "A", as the official script does).
func ExtractVideoMME(s string) string {
	s = strings.TrimSpace(s)
	for _, p := range videoMMEPrefixes {
		s = strings.ReplaceAll(s, p, "")
	}
	m := reABCD.FindString(s)
	if len(strings.Fields(s)) > 10 && m == "" {
		return ""
	}
	return m
}

// ExtractMLVU follows choice_bench's check_ans: when the prediction contains ')', it becomes the single
// character before the first ')'; the result counts only if it equals an option letter exactly (no strip).
func ExtractMLVU(pred string, letters []string) string {
	if i := strings.IndexByte(pred, ')'); i >= 0 {
		if i == 0 {
			pred = "" // Python's pred[-1:0] is empty
		} else {
			pred = pred[i-1 : i]
		}
	}
	for _, l := range letters {
		if pred == l {
			return l
		}
	}
	return ""
}
