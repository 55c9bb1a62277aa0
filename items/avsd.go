package items

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/record"
)

// AVSD (Audio Visual Scene-aware Dialog, DSTC7 track 3) as its public JSON release holds it: the files
// train_set4DSTC7-AVSD.json, valid_set4DSTC7-AVSD.json and test_set4DSTC7-AVSD.json, read by the
// challenge's baseline (dialogtekgeek/AudioVisualSceneAwareDialog, code/data_handler.py `load`) as
//
//	{"dialogs": [{"image_id": "<Charades video id>", "caption": …, "summary": …,
//	              "dialog": [{"question": …, "answer": …}, …]}, …]}
//
// In the test set each dialog's last answer is "__UNDISCLOSED__"; its six reference answers are in
// test_set4DSTC7-AVSD_multiref.json, a COCO caption file read by the challenge's evaluation
// (pycocotools COCO): {"images": [{"id": N, "name": "<image_id>_<turn>"}], "annotations":
// [{"image_id": N, "caption": …}, …]}.
type avsdFile struct {
	Dialogs *[]avsdDialog `json:"dialogs"`
}

type avsdDialog struct {
	ImageID string     `json:"image_id"`
	Caption string     `json:"caption"`
	Summary string     `json:"summary"`
	Dialog  []avsdTurn `json:"dialog"`
}

type avsdTurn struct {
	Question *string `json:"question"`
	Answer   *string `json:"answer"`
}

type cocoRefs struct {
	Images *[]struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"images"`
	Annotations *[]struct {
		ImageID int64  `json:"image_id"`
		Caption string `json:"caption"`
	} `json:"annotations"`
}

// AVSDUndisclosed is the test set's placeholder for the withheld answer.
const AVSDUndisclosed = "__UNDISCLOSED__"

// AVSD turn selections (ImportOptions.Turns).
const (
	AVSDTurnsLast = "last" // one item per dialog: its last turn, the one DSTC7 scores
	AVSDTurnsAll  = "all"  // one item per turn with an answer, each with the turns before it
)

// importAVSD turns an AVSD release file into dialogue items: the question of a turn, the dialog's
// earlier turns as history, the turn's answer as the reference (the test set: the six multi-reference
// answers of --references). item_id = avsd-<image_id>-<turn> (turn 0-based, as the dialog lists it);
// template generic, whatever the sweep's --template (a multiple-choice template would ask for a letter).
func importAVSD(src, videos string, o ImportOptions) ([]Item, error) {
	if len(o.Map) > 0 {
		return nil, fmt.Errorf("--map: the avsd format's keys are fixed (a key to leave out: --ignore KEY)")
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	b = trimBOM(b)
	if err := record.CheckJSON(b); err != nil {
		return nil, fmt.Errorf("%s: %v", src, err)
	}
	var f avsdFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: not AVSD's release JSON: %v", src, err)
	}
	if f.Dialogs == nil {
		return nil, fmt.Errorf(`%s: no "dialogs" list (is this an AVSD release file such as valid_set4DSTC7-AVSD.json?)`, src)
	}
	if err := avsdKeys(src, b, o.Ignore); err != nil {
		return nil, err
	}
	turns := o.Turns
	if turns == "" {
		turns = AVSDTurnsLast
	}
	if turns != AVSDTurnsLast && turns != AVSDTurnsAll {
		return nil, fmt.Errorf("--turns %q: want %s or %s", turns, AVSDTurnsLast, AVSDTurnsAll)
	}
	var refs map[string][][]string
	if o.References != "" {
		if refs, err = readAVSDRefs(o.References); err != nil {
			return nil, err
		}
	}
	vi := newVideoIndex(videos)
	var out []Item
	for di, d := range *f.Dialogs {
		its, err := avsdItems(src, di, d, turns, refs, vi.find(d.ImageID, videoExts...))
		if err != nil {
			return nil, err
		}
		out = append(out, its...)
	}
	return out, nil
}

// avsdKeys checks that the release holds only the keys the challenge's loader reads (type, dialogs; a
// dialog's image_id, caption, summary, dialog; a turn's question and answer), but those --ignore
// names: a key it does not know is an error naming it.
func avsdKeys(src string, b []byte, ignore []string) error {
	var top struct {
		Dialogs []struct {
			Dialog []map[string]json.RawMessage `json:"dialog"`
		} `json:"dialogs"`
	}
	var raw struct {
		Dialogs []map[string]json.RawMessage `json:"dialogs"`
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(b, &keys) != nil || json.Unmarshal(b, &raw) != nil || json.Unmarshal(b, &top) != nil {
		return nil // the typed decode has said what is wrong
	}
	skip := map[string]bool{}
	for _, k := range ignore {
		skip[k] = true
	}
	check := func(obj map[string]json.RawMessage, at string, known ...string) error {
		for k := range obj {
			if !skip[k] && !slices.Contains(known, k) {
				return fmt.Errorf("%s: %sunknown key %q: not a key of AVSD's release (%s; a key to leave out: --ignore %s)", src, at, k, strings.Join(known, ", "), k)
			}
		}
		return nil
	}
	if err := check(keys, "", "type", "dialogs"); err != nil {
		return err
	}
	for di, d := range raw.Dialogs {
		if err := check(d, fmt.Sprintf("dialog %d: ", di+1), "image_id", "caption", "summary", "dialog"); err != nil {
			return err
		}
		for ti, t := range top.Dialogs[di].Dialog {
			if err := check(t, fmt.Sprintf("dialog %d turn %d: ", di+1, ti), "question", "answer"); err != nil {
				return err
			}
		}
	}
	return nil
}

// avsdItems are one dialog's items.
func avsdItems(src string, di int, d avsdDialog, turns string, refs map[string][][]string, video string) ([]Item, error) {
	where := fmt.Sprintf("%s: dialog %d (image_id %q)", src, di+1, d.ImageID)
	if d.ImageID == "" || len(d.Dialog) == 0 {
		return nil, fmt.Errorf("%s: no image_id or no dialog turns", where)
	}
	var out []Item
	var history []Turn
	for ti, t := range d.Dialog {
		if t.Question == nil || t.Answer == nil {
			return nil, fmt.Errorf("%s: turn %d lacks question or answer", where, ti)
		}
		q, a := strings.TrimSpace(*t.Question), strings.TrimSpace(*t.Answer)
		last := ti == len(d.Dialog)-1
		if a == AVSDUndisclosed && !last {
			return nil, fmt.Errorf("%s: turn %d is undisclosed but not the last", where, ti)
		}
		if turns == AVSDTurnsAll || last {
			answers := []string{a}
			if a == AVSDUndisclosed {
				var err error
				if answers, err = avsdTestRefs(where, d.ImageID, ti, refs); err != nil {
					return nil, err
				}
			}
			it := Item{ItemID: fmt.Sprintf("avsd-%s-%d", d.ImageID, ti), Video: video, Question: q, Answer: answers[0],
				Task: "avsd", Category: "dialogue", History: append([]Turn(nil), history...), Template: "generic"}
			if len(answers) > 1 {
				it.References = answers[1:]
			}
			out = append(out, it)
		}
		history = append(history, Turn{Question: q, Answer: a})
	}
	return out, nil
}

// avsdTestRefs finds the reference answers of an undisclosed turn in the multi-reference file: the
// image named "<image_id>_<k>" — the only one of that video, or else the one whose k is the turn.
func avsdTestRefs(where, id string, turn int, refs map[string][][]string) ([]string, error) {
	if refs == nil {
		return nil, fmt.Errorf("%s: the last answer is %s (a test set): give its reference answers with --references test_set4DSTC7-AVSD_multiref.json", where, AVSDUndisclosed)
	}
	byTurn := refs[id]
	var found [][]string
	for k, rs := range byTurn {
		if rs != nil {
			found = append(found, byTurn[k])
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case turn < len(byTurn) && byTurn[turn] != nil:
		return byTurn[turn], nil
	}
	return nil, fmt.Errorf("%s: the references file has %d images named %s_<turn> and none for turn %d", where, len(found), id, turn)
}

var refName = regexp.MustCompile(`^(.+)_([0-9]+)$`)

// readAVSDRefs reads a COCO-format multi-reference file into image_id → turn → captions.
func readAVSDRefs(path string) (map[string][][]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = trimBOM(b)
	if err := record.CheckJSON(b); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var c cocoRefs
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: not a COCO caption file: %v", path, err)
	}
	if c.Images == nil || c.Annotations == nil {
		return nil, fmt.Errorf(`%s: no "images" or "annotations" (is this test_set4DSTC7-AVSD_multiref.json?)`, path)
	}
	names := map[int64][2]string{}
	for _, im := range *c.Images {
		m := refName.FindStringSubmatch(im.Name)
		if m == nil {
			return nil, fmt.Errorf("%s: image %d is named %q, not <image_id>_<turn>", path, im.ID, im.Name)
		}
		names[im.ID] = [2]string{m[1], m[2]}
	}
	out := map[string][][]string{}
	for i, a := range *c.Annotations {
		n, ok := names[a.ImageID]
		if !ok {
			return nil, fmt.Errorf("%s: annotation %d names image %d, which is not listed", path, i+1, a.ImageID)
		}
		if strings.TrimSpace(a.Caption) == "" {
			return nil, fmt.Errorf("%s: annotation %d has an empty caption", path, i+1)
		}
		turn, _ := strconv.Atoi(n[1])
		if turn > 1000 {
			return nil, fmt.Errorf("%s: image %q: turn %d", path, n[0]+"_"+n[1], turn)
		}
		byTurn := out[n[0]]
		for len(byTurn) <= turn {
			byTurn = append(byTurn, nil)
		}
		byTurn[turn] = append(byTurn[turn], strings.TrimSpace(a.Caption))
		out[n[0]] = byTurn
	}
	return out, nil
}

func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		return b[3:]
	}
	return b
}
