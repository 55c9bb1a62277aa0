package items

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// mlvuGenRow is one question of an MLVU generation task file: Sub-Scene Captioning (dev
// json/8_sub_scene.json, question_type "subPlot") and Video Summarization (json/9_summary.json,
// "summary"), as MLVU's open_bench.py reads them (video, question, answer; JUNJIE99/MLVU
// videochat2/open_bench.py) — the multiple-choice fields absent. MLVU scores these with a GPT judge;
// the study, and a sweep, with Token-F1 against the answer.
type mlvuGenRow struct {
	Video        *string   `json:"video"`
	Duration     *float64  `json:"duration"`
	Question     *string   `json:"question"`
	Answer       *string   `json:"answer"`
	QuestionType string    `json:"question_type"`
	Candidates   *[]string `json:"candidates"`
}

// importMLVUGen reads one MLVU generation task file into open-ended items: the reference text is the
// answer; item_id = mlvu-<file stem>-<row> as for the multiple-choice files; template generic (the
// question alone). A row with candidates
// (a multiple-choice task) or without video, question or answer is an error naming it.
func importMLVUGen(src, videos string) ([]Item, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	var rows []mlvuGenRow
	if err := json.Unmarshal(trimBOM(b), &rows); err != nil {
		return nil, fmt.Errorf("%s: not an MLVU task file (a JSON list of questions): %v", src, err)
	}
	stem := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
	vi := newVideoIndex(videos)
	out := make([]Item, 0, len(rows))
	for i, r := range rows {
		switch {
		case r.Candidates != nil:
			return nil, fmt.Errorf("%s: row %d has candidates: a multiple-choice task (import it with the mlvu format)", src, i+1)
		case r.Video == nil || strings.TrimSpace(*r.Video) == "":
			return nil, fmt.Errorf("%s: row %d: no video", src, i+1)
		case r.Question == nil || strings.TrimSpace(*r.Question) == "":
			return nil, fmt.Errorf("%s: row %d: no question", src, i+1)
		case r.Answer == nil || strings.TrimSpace(*r.Answer) == "":
			return nil, fmt.Errorf("%s: row %d: no answer (the reference text Token-F1 scores against)", src, i+1)
		case r.QuestionType == "":
			return nil, fmt.Errorf("%s: row %d: no question_type", src, i+1)
		}
		it := Item{ItemID: fmt.Sprintf("mlvu-%s-%d", stem, i), Video: vi.find(*r.Video, videoExts...), Question: strings.TrimSpace(*r.Question),
			Answer: strings.TrimSpace(*r.Answer), Task: "mlvu/" + r.QuestionType, Category: r.QuestionType, Template: "generic"}
		if r.Duration != nil && *r.Duration > 0 {
			d := *r.Duration
			it.DurationS = &d
		}
		out = append(out, it)
	}
	return out, nil
}
