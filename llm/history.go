package llm

import "strings"

// Turn is one earlier exchange of a dialogue (Request.History).
type Turn struct {
	Question string
	Answer   string
}

// HistoryHeader opens the dialogue history in a prompt.
const HistoryHeader = "The conversation about this video so far:"

// withHistory puts a dialogue's earlier turns at the start of the user turn, after the frames and
// before the template's text (the question):
//
//	The conversation about this video so far:
//	Q: <question 1>
//	A: <answer 1>
//	…
//	<the template's user text>
//
// AVSD's baselines feed the history as the text before the question in the same way (each earlier
// question and answer in order); a prompt without history is unchanged.
func withHistory(p Prompt, h []Turn) Prompt {
	if len(h) == 0 {
		return p
	}
	var b strings.Builder
	b.WriteString(HistoryHeader + "\n")
	for _, t := range h {
		b.WriteString("Q: " + t.Question + "\nA: " + t.Answer + "\n")
	}
	b.WriteString("\n" + p.User)
	p.User = b.String()
	return p
}
