package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/framesweep/framesweep/internal/testsupport/testenv"
	"github.com/framesweep/framesweep/items"
	"github.com/framesweep/framesweep/llm"
	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/score"
)

// TestSweepDialogue: dialogue items (AVSD's form: earlier turns, reference answers) through the tiny
// model: the prompt each pair was asked is the one with the history (its digest is recomputed here
// from llm.Render), and the score is Token-F1 against the answer and every reference, the best.
func TestSweepDialogue(t *testing.T) {
	t.Parallel()
	rt, sp := tinyRuntime(t)
	grid := filepath.Join(t.TempDir(), "grid.yaml")
	testenv.WriteFile(t, grid, []byte("frames: [2]\npolicies: [uniform]\nresolutions: [\"64x48\"]\ntext_only: true\n"))
	o := testOptions(t, filepath.Join(t.TempDir(), "run"), rt, sp, grid)
	video := ""
	for _, it := range o.Items.Items {
		if filepath.Base(it.Video) == "nasa_13013.mp4" {
			video = it.Video
		}
	}
	h := []items.Turn{{Question: "what is in the room ?", Answer: "a large gold mirror ."}, {Question: "is anyone there ?", Answer: "yes , two workers ."}}
	o.Items = &items.File{Path: "dialogue.jsonl", SHA256: "d", Items: []items.Item{
		{ItemID: "avsd-nasa-2", Video: video, Question: "what are they doing ?", Answer: "they are inspecting the mirror .",
			References: []string{"they check the mirror segments .", "working on the mirror ."}, History: h, Task: "avsd"},
		{ItemID: "avsd-nasa-0", Video: video, Question: "what is in the room ?", Answer: "a large gold mirror .", Task: "avsd"},
	}}
	if _, err := Run(context.Background(), nil, o); err != nil {
		t.Fatal(err)
	}
	recs := readRun(t, o.Out)
	if len(recs) != 4 {
		t.Fatalf("%d records", len(recs))
	}
	for k, r := range recs {
		it := o.Items.Items[0]
		if k.Item != it.ItemID {
			it = o.Items.Items[1]
		}
		if r.Status != record.StatusOK || r.Score == nil || r.Correct != nil {
			t.Fatalf("%v: %+v", k, r)
		}
		req := &llm.Request{Question: it.Question, Template: llm.TemplateGeneric}
		for _, turn := range it.History {
			req.History = append(req.History, llm.Turn{Question: turn.Question, Answer: turn.Answer})
		}
		p, _, err := llm.Render(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p)
		sum := sha256.Sum256(b)
		if r.PromptSHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%v: prompt digest %s is not the dialogue prompt's", k, r.PromptSHA256)
		}
		best := score.TokenF1(r.Response, it.Answer)
		for _, ref := range it.References {
			best = max(best, score.TokenF1(r.Response, ref))
		}
		if *r.Score != best {
			t.Errorf("%v: score %v, best Token-F1 over the references %v", k, *r.Score, best)
		}
	}
}
