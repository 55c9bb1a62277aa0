package llm

import (
	"regexp"
	"strings"
)

// The generic template's answer parser. The benchmark templates follow their official scorers
// (ExtractVideoMME, ExtractMLVU); generic has no official scorer, so it takes the rule VLMEvalKit
// falls back to for every multiple-choice dataset (vlmeval/utils/matching_util.py can_infer_option:
// the one option letter that stands alone in the answer) after the explicit forms a model writes when
// it follows the prompt ("B", "(B)", "B. cat", "Answer: B", "The answer is B"). docs/runtimes.md
// ("Answer parsing") compares it with lmms-eval's extract_mcq_answer.

// reDeclared finds an answer declaration ("Answer:", "the correct answer is", "Best option: (",
// "my choice is", "<answer>", "\boxed{"); the letter is read after it. A bare "option B" is not one: prose names options
// it rejects ("option A is wrong, so the answer is C").
var reDeclared = regexp.MustCompile(`(?i)(?:(?:^|[^\p{L}\p{N}_])(?:(?:the|my)\s+)?(?:(?:correct|best|final|right)\s+)?(?:answer|option|choice)(?:\s+is\b\s*:?|\s*[:=])|<answer>|\\boxed\{)`)

// reAssertion is what may follow a leading "A" or "I" for it to be a letter, not a word ("A is
// correct", "A because …").
var reAssertion = regexp.MustCompile(`^\s+(?:because\b|(?:is|seems|looks|appears)\s+(?:(?:the|a)\s+)?(?:correct|right|best|answer|option|choice)\b)`)

// ExtractGeneric returns the option letter of a free-form answer, "" when it names none or several:
//  1. the letter after the last answer declaration ("Answer: B", "The answer is (C)", "best option: b");
//     a declared letter that is no option gives "";
//  2. else a leading letter ("B", "(B)", "B. cat", "B) cat", "**B**", "b", "b."), unless it is the
//     English word "A" or "I" ("A bear", "I cannot answer");
//  3. else the one option letter that stands alone among the words once .()[],:;!*#{} are spaces
//     (VLMEvalKit's can_infer_option): "X B" gives B; "A or B" gives "" (two letters); "A"/"I"
//     before a lower-case word other than and/or/nor is English, not a letter.
func ExtractGeneric(s string, letters []string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	valid := make(map[string]bool, len(letters))
	for _, l := range letters {
		valid[l] = true
	}
	if l, ok := declaredLetter(s, valid); ok {
		return l
	}
	if l := leadingLetter(s); valid[l] {
		return l
	}
	return loneLetter(s, valid)
}

// declaredLetter is the letter of the last declaration that is followed by one; ok is false when
// no declaration is ("answer the question" declares nothing).
func declaredLetter(s string, valid map[string]bool) (string, bool) {
	letter, ok := "", false
	for _, m := range reDeclared.FindAllStringIndex(s, -1) {
		if l, _ := readChoice(s[m[1]:]); l != "" {
			letter, ok = l, true
		}
	}
	if ok && !valid[letter] {
		return "", true // an explicit answer that is no option is not parsed as another one
	}
	return letter, ok
}

// leadingLetter is the letter the answer starts with, "" when it starts with a word.
func leadingLetter(s string) string {
	l, rest := readChoice(s)
	if (l == "A" || l == "I") && startsWord(rest) && !reAssertion.MatchString(rest) {
		return "" // the article or the pronoun
	}
	return l
}

// wrappers are what may enclose a letter: "(B)", "[B]", "**B**", "'B'".
const wrappers = "([{*_\"'`"

// readChoice reads one option letter at the start of t (after spaces and wrappers): an upper-case
// letter not followed by a letter, digit or "_", or a lower-case one followed by nothing but
// punctuation or the end ("b", "b.", "(b)"; not "a bear"). It returns the letter (upper case) and the
// text after it.
func readChoice(t string) (string, string) {
	t = strings.TrimLeft(t, " \t\r\n")
	for t != "" && strings.IndexByte(wrappers, t[0]) >= 0 {
		t = strings.TrimLeft(t[1:], " \t\r\n")
	}
	if t == "" {
		return "", ""
	}
	c, rest := t[0], t[1:]
	if rest != "" && (isWordByte(rest[0]) || len(rest) > 1 && rest[0] == '\'' && isWordByte(rest[1])) {
		return "", "" // a word, or a contraction ("I'm")
	}
	switch {
	case c >= 'A' && c <= 'Z':
		return string(c), rest
	case c >= 'a' && c <= 'z' && strings.Trim(rest, " \t\r\n.,:;!?)]}*_\"'`") == "":
		return string(c - 'a' + 'A'), rest
	}
	return "", ""
}

// isWordByte reports whether b continues a word: a letter, digit, "_" or a byte of a multi-byte
// character ("Bé" is a word, not B).
func isWordByte(b byte) bool {
	return b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_' || b >= 0x80
}

// startsWord reports whether rest is white space then a lower-case word.
func startsWord(rest string) bool {
	t := strings.TrimLeft(rest, " \t")
	return len(t) < len(rest) && t != "" && t[0] >= 'a' && t[0] <= 'z'
}

// loneLetter is the one option letter among the answer's words (VLMEvalKit's can_infer_option),
// "" when none or several are.
func loneLetter(s string, valid map[string]bool) string {
	words := strings.Fields(strings.Map(func(r rune) rune {
		if strings.ContainsRune(".()[],:;!*#{}", r) {
			return ' '
		}
		return r
	}, s))
	found := ""
	for i, w := range words {
		if !valid[w] {
			continue
		}
		if (w == "A" || w == "I") && i+1 < len(words) && isLowerWord(words[i+1]) {
			continue // "A bear", "I think": English
		}
		if found != "" && found != w {
			return "" // two letters: ambiguous
		}
		found = w
	}
	return found
}

// isLowerWord reports whether w is a lower-case word other than a conjunction ("A or B" names two
// letters).
func isLowerWord(w string) bool {
	switch w {
	case "and", "or", "nor":
		return false
	}
	return w[0] >= 'a' && w[0] <= 'z'
}
