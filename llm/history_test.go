package llm

import "testing"

// TestHistoryPrompt: a dialogue's earlier turns open the user text, before any template's own text;
// an open-ended question in the generic template is the question alone (no letter to ask for); a
// request without history renders as before.
func TestHistoryPrompt(t *testing.T) {
	h := []Turn{{"is there only one person ?", "yes , just one man ."}, {"what does he do first ?", "he opens the door ."}}
	p, tpl, err := Render(&Request{Question: "does he say anything ?", History: h})
	want := "The conversation about this video so far:\nQ: is there only one person ?\nA: yes , just one man .\nQ: what does he do first ?\nA: he opens the door .\n\ndoes he say anything ?"
	if err != nil || tpl.ID != TemplateGeneric || p.User != want || p.System != "" {
		t.Errorf("dialogue prompt %q (%v), want %q", p.User, err, want)
	}
	p, _, _ = Render(&Request{Question: "Summarise the video."})
	if p.User != "Summarise the video." {
		t.Errorf("open-ended generic prompt %q", p.User)
	}
	mc, _, _ := Render(&Request{Question: "Q?", Options: []string{"A. x", "B. y"}, Template: TemplateVideoMME})
	withH, _, _ := Render(&Request{Question: "Q?", Options: []string{"A. x", "B. y"}, Template: TemplateVideoMME, History: h[:1]})
	if withH.User != "The conversation about this video so far:\nQ: is there only one person ?\nA: yes , just one man .\n\n"+mc.User {
		t.Errorf("history before a template's text: %q", withH.User)
	}
	own := Prompt{User: "mine"}
	if p, _, _ := Render(&Request{Question: "Q", Prompt: &own, History: h}); p.User != "mine" {
		t.Errorf("a request's own prompt is taken as given: %q", p.User)
	}
}
