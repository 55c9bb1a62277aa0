package items

import (
	"fmt"
	"path/filepath"
	"strings"
)

// importMLVUGen reads one MLVU generation task file — Sub-Scene Captioning (dev json/8_sub_scene.json,
// question_type "subPlot") and Video Summarization (json/9_summary.json, "summary"), as MLVU's
// open_bench.py reads them (video, question, answer; JUNJIE99/MLVU videochat2/open_bench.py) — into
// open-ended items: the reference text is the answer; item_id = mlvu-<file stem>-<row> as for the
// multiple-choice files; template generic (the question alone). MLVU scores these with a GPT judge; the
// study, and a sweep, with Token-F1 against the answer. Rows are read strictly (mlvuGenSchema): a row
// with candidates (a multiple-choice task), an unknown key, or without video, question, answer or
// question_type is an error naming it.
func importMLVUGen(src, videos string, o ImportOptions) ([]Item, error) {
	km, err := newKeyMap(&mlvuGenSchema, o)
	if err != nil {
		return nil, err
	}
	rows, err := readJSONRows(src, &mlvuGenSchema, km)
	if err != nil {
		return nil, err
	}
	stem := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
	vi := newVideoIndex(videos)
	out := make([]Item, 0, len(rows))
	for i, r := range rows {
		if _, mc := r["candidates"]; mc {
			return nil, fmt.Errorf("%s: row %d has candidates: a multiple-choice task (import it with the mlvu format)", src, i+1)
		}
		for _, f := range [...]string{"video", "question", "answer", "question_type"} {
			if strings.TrimSpace(r.str(f)) == "" {
				return nil, fmt.Errorf("%s: row %d: empty %s", src, i+1, f)
			}
		}
		qt := r.str("question_type")
		it := Item{ItemID: fmt.Sprintf("mlvu-%s-%d", stem, i), Video: vi.find(r.str("video"), videoExts...), Question: strings.TrimSpace(r.str("question")),
			Answer: strings.TrimSpace(r.str("answer")), Task: "mlvu/" + qt, Category: qt, Template: "generic"}
		if d := r.number("duration"); d > 0 {
			it.DurationS = &d
		}
		out = append(out, it)
	}
	return out, nil
}
