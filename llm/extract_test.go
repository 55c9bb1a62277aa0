package llm

import "testing"

// TestExtractTable runs every template's parser over the outputs models write (the forms the study's
// five models and the tiny test model produced, refusals, markup) with four options A–D. videomme
// and mlvu are the benchmarks' official scorers, strict where they are (docs/runtimes.md, "Answer
// parsing"); generic parses every form that names exactly one option.
func TestExtractTable(t *testing.T) {
	letters := []string{"A", "B", "C", "D"}
	cases := []struct{ out, generic, videomme, mlvu string }{
		{"B", "B", "B", "B"},
		{"(B)", "B", "B", "B"},
		{"B.", "B", "B", ""}, // MLVU's check_ans: no ')' → the whole reply must be the letter
		{"B) A horse", "B", "B", "B"},
		{"B. A horse", "B", "B", ""},
		{"**B**", "B", "B", ""},
		{"Answer: B", "B", "B", ""},
		{"ANSWER: B", "B", "A", ""}, // Video-MME deletes only "Answer:"; its first [ABCD] is the A of ANSWER
		{"The answer is B", "B", "B", ""},
		{"The best answer is (C).", "C", "C", "C"},
		{"The correct answer is D. A wire fence", "D", "D", ""},
		{"I think the answer is B.", "B", "B", ""},
		{"<answer>C</answer>", "C", "C", ""},
		{"\\boxed{C}", "C", "C", ""},
		{"D) A wire fence", "D", "D", "D"},               // MLVU's reply after its prefilled "Best Option: ("
		{"Best Option: (D) A wire fence", "D", "B", "D"}, // Video-MME's first [ABCD] is the B of "Best"
		{"Option C is correct because the bear swims.", "C", "C", ""},
		// letters after other capitals: the separator before the letter is not part of a word
		{"X B", "B", "B", ""},
		{"SADh E D E D E D E D", "D", "A", ""}, // the tiny test model's reply; E is no option
		{"Answer: B. Option A is wrong.", "B", "B", ""},
		// lower case: a letter alone, or declared
		{"b", "B", "", ""},
		{"(b)", "B", "", ""},
		{"answer: c", "C", "", ""},
		{"The answer is a bear", "", "", ""}, // "a" is the article
		// English "A" and "I" are words, not letters
		{"A", "A", "A", "A"},
		{"A bear is shown.", "", "A", ""},
		{"A is correct", "A", "A", ""},
		{"I think B.", "B", "B", ""},
		{"I'm not sure, maybe C", "C", "C", ""},
		// several letters, none, refusals, empty
		{"A or B", "", "A", ""},
		{"A and C", "", "A", ""},
		{"Answer: E", "", "", ""}, // declared, but no option
		{"I cannot answer", "", "", ""},
		{"I'm sorry, but I cannot determine the answer from the video.", "", "", ""},
		{"None of the options is right.", "", "", ""},
		{"", "", "", ""},
		{"   \n", "", "", ""},
	}
	tpl := func(id string) Template {
		tp, err := TemplateByID(id)
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	gen, vm, ml := tpl(TemplateGeneric), tpl(TemplateVideoMME), tpl(TemplateMLVU)
	for _, c := range cases {
		for _, x := range []struct {
			t    Template
			want string
		}{{gen, c.generic}, {vm, c.videomme}, {ml, c.mlvu}} {
			if got := x.t.Extract(c.out, letters); got != x.want {
				t.Errorf("%s(%q) = %q, want %q", x.t.ID, c.out, got, x.want)
			}
		}
	}
}

// TestExtractGenericOptionCount: the letters offered decide what stands alone; a ninth option makes
// "I" a letter, but not the pronoun.
func TestExtractGenericOptionCount(t *testing.T) {
	two := []string{"A", "B"}
	nine := []string{"A", "B", "C", "D", "E", "F", "G", "H", "I"}
	cases := []struct {
		out     string
		letters []string
		want    string
	}{
		{"SADh E D E D", two, ""},  // no option letter stands alone: unparsed, not a guess
		{"SADh E D E D", nine, ""}, // D and E: two letters
		{"I cannot answer", nine, ""},
		{"I", nine, "I"},
		{"The answer is I.", nine, "I"},
		{"C", two, ""},
	}
	for _, c := range cases {
		if got := ExtractGeneric(c.out, c.letters); got != c.want {
			t.Errorf("ExtractGeneric(%q, %d options) = %q, want %q", c.out, len(c.letters), got, c.want)
		}
	}
}
