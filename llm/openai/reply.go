package openai

import (
	"fmt"
	"math"
	"strings"

	"github.com/framesweep/framesweep/llm"
)

// chatResponse is what the client reads of a chat completion (OpenAI's chat.completion object).
// Pointers tell a field that is missing or null from a zero: decodeReply refuses a reply whose
// answer is not there rather than reading it as an empty answer or a logprob of 0.
type chatResponse struct {
	Choices []*chatChoice `json:"choices"`
	Usage   *chatUsage    `json:"usage"`
}

type chatChoice struct {
	Message  *chatMessage `json:"message"`
	Text     *string      `json:"text"` // a completions-API choice: read only to name it
	Logprobs *struct {
		Content []tokenLogprob `json:"content"`
	} `json:"logprobs"`
}

type chatMessage struct {
	Content *string `json:"content"`
}

// chatUsage: the counts are optional (an absent or null count is 0, "not reported"), but a count
// given is a whole number ≥ 0.
type chatUsage struct {
	PromptTokens     *int `json:"prompt_tokens"`
	CompletionTokens *int `json:"completion_tokens"`
}

type topLogprob struct {
	Token   string   `json:"token"`
	Logprob *float64 `json:"logprob"`
}

type tokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     *float64     `json:"logprob"`
	TopLogprobs []topLogprob `json:"top_logprobs"`
}

// decodeReply reads a 2xx body as a chat completion and checks what the client takes from it: the
// first choice's message content (a string: null, a missing message or a completions-API "text"
// is no answer), the usage counts, and every logprob (a finite number ≤ 0; null is not 0). A key
// given twice or in other letters than the field's is no reply either (decodeStrict). The error
// wraps llm.ErrBadResponse and quotes the body's start.
func decodeReply(status int, data []byte) (*chatResponse, error) {
	var out chatResponse
	if err := decodeStrict(data, &out); err != nil {
		return nil, fmt.Errorf("%w: HTTP %d reply is not chat-completion JSON (%s): %v", llm.ErrBadResponse, status, snippet(data), err)
	}
	if why := out.check(); why != "" {
		return nil, fmt.Errorf("%w: HTTP %d reply is not a chat completion: %s (%s)", llm.ErrBadResponse, status, why, snippet(data))
	}
	return &out, nil
}

// check says what makes r no chat completion the client can take ("" when nothing does).
func (r *chatResponse) check() string {
	if len(r.Choices) == 0 {
		return "no choices"
	}
	ch := r.Choices[0]
	switch {
	case ch == nil:
		return "choices[0] is null"
	case ch.Message == nil && ch.Text != nil:
		return "choices[0] has a text and no message (a completions reply, not a chat completion)"
	case ch.Message == nil:
		return "choices[0] has no message"
	case ch.Message.Content == nil:
		return "choices[0].message.content is null or missing"
	}
	if u := r.Usage; u != nil {
		for _, n := range [...]struct {
			name string
			v    *int
		}{{"prompt_tokens", u.PromptTokens}, {"completion_tokens", u.CompletionTokens}} {
			if n.v != nil && *n.v < 0 {
				return fmt.Sprintf("usage.%s %d is negative", n.name, *n.v)
			}
		}
	}
	if ch.Logprobs != nil {
		for i, tl := range ch.Logprobs.Content {
			if why := badLogprob(tl.Logprob); why != "" {
				return fmt.Sprintf("logprobs.content[%d].logprob %s", i, why)
			}
			for j, t := range tl.TopLogprobs {
				if why := badLogprob(t.Logprob); why != "" {
					return fmt.Sprintf("logprobs.content[%d].top_logprobs[%d].logprob %s", i, j, why)
				}
			}
		}
	}
	return ""
}

// badLogprob says why lp is not a log-probability ("" when it is one): null, not finite, or > 0.
func badLogprob(lp *float64) string {
	switch {
	case lp == nil:
		return "is null"
	case math.IsNaN(*lp) || math.IsInf(*lp, 0):
		return fmt.Sprintf("%v is not finite", *lp)
	case *lp > 0:
		return fmt.Sprintf("%v is above 0", *lp)
	}
	return ""
}

// fill copies the checked reply into resp.
func (r *chatResponse) fill(resp *llm.Response, req *llm.Request) {
	ch := r.Choices[0]
	resp.Text = *ch.Message.Content
	if u := r.Usage; u != nil {
		if u.PromptTokens != nil {
			resp.PromptTokens = *u.PromptTokens
		}
		if u.CompletionTokens != nil {
			resp.CompletionTokens = *u.CompletionTokens
		}
	}
	if ch.Logprobs != nil {
		resp.Probs = OptionProbs(ch.Logprobs.Content, llm.Letters(req.Options))
	}
}

// normalizeToken maps raw tokenizer spellings to text: "ĠA" (byte-level BPE) and "▁A" (SentencePiece).
func normalizeToken(t string) string {
	t = strings.ReplaceAll(t, "Ġ", " ")
	t = strings.ReplaceAll(t, "▁", " ")
	return t
}

// answerLetter returns the letter a token spells — "A", " A", "(A", "A.", "A)" — or "".
func answerLetter(tok string) string {
	return llm.TokenLetter(normalizeToken(tok))
}

// OptionProbs computes option probabilities from chat logprobs at the first answer position: the first
// generated token that is not only whitespace or "(". Variants of a letter add up; absent letters get 0
// before renormalisation; nil when no option letter is among that position's top_logprobs. The
// logprobs are checked ones (decodeReply); a nil one carries no evidence.
func OptionProbs(content []tokenLogprob, letters []string) map[string]float64 {
	for _, tl := range content {
		if strings.Trim(normalizeToken(tl.Token), " \t\n(") == "" {
			continue
		}
		scores := map[string][]float64{}
		seen := map[string]bool{}
		add := func(tok string, lp *float64) {
			if seen[tok] || lp == nil || math.IsNaN(*lp) {
				return
			}
			seen[tok] = true
			if l := answerLetter(tok); l != "" {
				scores[l] = append(scores[l], *lp)
			}
		}
		for _, t := range tl.TopLogprobs {
			add(t.Token, t.Logprob)
		}
		add(tl.Token, tl.Logprob) // the sampled token, in case top_logprobs omits it
		return llm.LetterProbs(scores, letters)
	}
	return nil
}
