package items

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/record"
)

// MaxLine bounds one line of an items file (a question with subtitles fits easily): Read (the sweep)
// refuses a longer line, and an import refuses an item whose line would be longer.
const MaxLine = 4 << 20

// ErrMalformed marks a malformed items file.
var ErrMalformed = errors.New("bad items file")

// Item is one question: the canonical ITEMS.jsonl line (README "Items file", docs/sweep.md).
type Item struct {
	ItemID    string   `json:"item_id"`
	Video     string   `json:"video"`              // absolute, or relative to the items file
	Question  string   `json:"question"`           // the question text
	Options   []string `json:"options,omitempty"`  // "A. …", "B. …"; none for open-ended tasks
	Answer    string   `json:"answer"`             // a letter (multiple choice) or the reference text
	Task      string   `json:"task,omitempty"`     // e.g. "videomme", "mlvu/count"
	Category  string   `json:"category,omitempty"` // analysed per category by the audit
	Duration  string   `json:"duration,omitempty"` // a duration group (Video-MME short|medium|long)
	Subtitles string   `json:"subtitles,omitempty"`
	DurationS *float64 `json:"duration_s,omitempty"`
	// Template overrides the sweep's --template for this item (videomme, mlvu, generic).
	Template string `json:"template,omitempty"`
	// History is a dialogue's earlier turns (AVSD), shown to the model before the question.
	History []Turn `json:"history,omitempty"`
	// References are more reference answers of an open-ended item (AVSD's test set has six): Token-F1
	// scores the response against Answer and these, and keeps the best.
	References []string `json:"references,omitempty"`
}

// Turn is one earlier exchange of a dialogue.
type Turn struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// MultipleChoice reports whether the item has options (scored by letter) rather than a reference
// text (scored by Token-F1).
func (it *Item) MultipleChoice() bool { return len(it.Options) > 0 }

// File is a parsed items file.
type File struct {
	Path   string
	Items  []Item
	SHA256 string // digest of the canonical encoding of Items (whitespace and key order do not count)
}

// Read reads and validates an items file: one JSON object per line (blank lines and a UTF-8 BOM
// are allowed), unknown keys rejected, item_id unique, video, question and answer present, options
// labelled A, B, C… in order when given, and a multiple-choice answer one of those letters. Relative
// video paths are resolved against the file's directory. Every error names the file and the line.
func Read(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse is Read on a reader; path names it in errors and anchors relative videos.
func Parse(r io.Reader, path string) (*File, error) { return parse(r, path, false) }

// ReadAnswers reads an items file that gives the answers of records that come from a table (`import
// table --items`): a line needs item_id and answer alone; task, category, duration, question and
// every other key of an items line are optional (unknown keys are still errors). An item is (task,
// item id): splits of one benchmark share ids, so the same id in two tasks is two items, and a (task,
// id) twice is an error naming both lines. A full items file reads too. A sweep's items file is read
// with Read, which stays strict (a sweep names its pairs by item id alone).
func ReadAnswers(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	return parse(f, path, true)
}

// parse reads an items file; answers: an answers-only file (ReadAnswers).
func parse(r io.Reader, path string, answers bool) (*File, error) {
	out := &File{Path: path}
	br := bufio.NewReaderSize(r, 1<<16)
	seen := map[[2]string]int{}
	dir := filepath.Dir(path)
	h := sha256.New()
	for line := 1; ; line++ {
		b, err := record.ReadLine(br, MaxLine-1) // MaxLine counts the newline, as Write does
		if errors.Is(err, record.ErrTooLong) {
			err = fmt.Errorf("line over %d bytes", MaxLine)
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w: %v", path, line, ErrMalformed, err)
		}
		if line == 1 {
			b = record.TrimBOM(b)
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			it, perr := parseItem(t, answers)
			if perr != nil {
				return nil, fmt.Errorf("%s:%d: %w: %v", path, line, ErrMalformed, perr)
			}
			key := [2]string{"", it.ItemID}
			if answers {
				key[0] = it.Task
			}
			if prev, dup := seen[key]; dup && answers && it.Task != "" {
				return nil, fmt.Errorf("%s:%d: %w: item_id %q of task %q already on line %d", path, line, ErrMalformed, it.ItemID, it.Task, prev)
			} else if dup {
				return nil, fmt.Errorf("%s:%d: %w: item_id %q already on line %d", path, line, ErrMalformed, it.ItemID, prev)
			}
			seen[key] = line
			canon, _ := json.Marshal(it)
			h.Write(canon)
			h.Write([]byte{'\n'})
			if it.Video != "" && !filepath.IsAbs(it.Video) {
				it.Video = filepath.Join(dir, it.Video)
			}
			out.Items = append(out.Items, it)
		}
		if err == io.EOF {
			break
		}
	}
	if len(out.Items) == 0 {
		return nil, fmt.Errorf("%s: %w: no items", path, ErrMalformed)
	}
	out.SHA256 = hex.EncodeToString(h.Sum(nil))
	return out, nil
}

func parseItem(b []byte, answers bool) (Item, error) {
	var it Item
	// Valid UTF-8, no escaped lone surrogate, no key twice (record.CheckJSON): encoding/json would
	// make U+FFFD of an invalid byte, and two ids that differ only there one.
	if err := record.CheckJSON(b); err != nil {
		return it, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&it); err != nil {
		return it, fmt.Errorf("not an item: %v", err)
	}
	if dec.More() {
		return it, errors.New("more than one JSON value on the line")
	}
	if len(it.Options) == 0 {
		// "options": [] says multiple choice and gives no option: read as open-ended, its answer
		// "A" would be a reference text that a model answering "A" matches.
		var probe struct {
			Options json.RawMessage `json:"options"`
		}
		if json.Unmarshal(b, &probe) == nil && len(probe.Options) > 0 && string(probe.Options) != "null" {
			return it, fmt.Errorf("item %q: options is an empty list (leave the key out of an open-ended item)", it.ItemID)
		}
	}
	if answers {
		return it, it.validateAnswer()
	}
	return it, it.Validate()
}

// validateAnswer checks an answers-only line: an item id and an answer; what else it gives, checked
// as in a full line.
func (it *Item) validateAnswer() error {
	if err := it.validUTF8(); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(it.ItemID) == "":
		return errors.New("missing item_id")
	case len(it.ItemID) > 512:
		return fmt.Errorf("item_id of %d bytes (at most 512)", len(it.ItemID))
	case strings.TrimSpace(it.Answer) == "":
		return fmt.Errorf("item %q: missing answer", it.ItemID)
	case strings.Contains(it.Video, "://"):
		return fmt.Errorf("item %q: video %q is a URL; videos are local files", it.ItemID, it.Video)
	}
	return it.validateRest()
}

// Validate checks one item.
func (it *Item) Validate() error {
	if err := it.validUTF8(); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(it.ItemID) == "":
		return errors.New("missing item_id")
	case len(it.ItemID) > 512:
		return fmt.Errorf("item_id of %d bytes (at most 512)", len(it.ItemID))
	case strings.TrimSpace(it.Video) == "":
		return fmt.Errorf("item %q: missing video", it.ItemID)
	case strings.Contains(it.Video, "://"):
		return fmt.Errorf("item %q: video %q is a URL; videos are local files", it.ItemID, it.Video)
	case strings.TrimSpace(it.Question) == "":
		return fmt.Errorf("item %q: missing question", it.ItemID)
	case strings.TrimSpace(it.Answer) == "":
		return fmt.Errorf("item %q: missing answer", it.ItemID)
	}
	return it.validateRest()
}

// validateRest checks what Validate and an answers-only line (ReadAnswers) check alike: the options,
// the answer among them, the duration, a dialogue's turns.
func (it *Item) validateRest() error {
	if len(it.Options) > 26 {
		return fmt.Errorf("item %q: %d options (at most 26)", it.ItemID, len(it.Options))
	}
	if err := record.CheckDuration("duration", it.Duration); err != nil {
		return fmt.Errorf("item %q: %v", it.ItemID, err)
	}
	if it.DurationS != nil {
		if err := num.AtLeast(0).Float("duration_s", *it.DurationS); err != nil {
			return fmt.Errorf("item %q: %v", it.ItemID, err)
		}
	}
	if err := it.validateDialogue(); err != nil {
		return err
	}
	if len(it.Options) == 0 {
		return nil
	}
	for i, o := range it.Options {
		if want := string(rune('A' + i)); optionLetter(o) != want {
			return fmt.Errorf("item %q: option %d %q does not start with %q (e.g. %q)", it.ItemID, i+1, o, want, want+". …")
		}
	}
	if a := strings.ToUpper(strings.TrimSpace(it.Answer)); len(a) != 1 || a[0] < 'A' || int(a[0]-'A') >= len(it.Options) {
		return fmt.Errorf("item %q: answer %q is not one of the option letters A..%c", it.ItemID, it.Answer, 'A'+len(it.Options)-1)
	}
	return nil
}

// validUTF8: every text of the item is UTF-8. encoding/json writes an invalid byte as U+FFFD, so two
// ids that differ only there would become one item (and one a duplicate).
func (it *Item) validUTF8() error {
	for _, f := range [...]struct{ name, s string }{{"item_id", it.ItemID}, {"video", it.Video}, {"question", it.Question},
		{"answer", it.Answer}, {"task", it.Task}, {"category", it.Category}, {"duration", it.Duration},
		{"subtitles", it.Subtitles}, {"template", it.Template}} {
		if !utf8.ValidString(f.s) {
			return fmt.Errorf("item %q: %s is not valid UTF-8", it.ItemID, f.name)
		}
	}
	for i, o := range it.Options {
		if !utf8.ValidString(o) {
			return fmt.Errorf("item %q: option %d is not valid UTF-8", it.ItemID, i+1)
		}
	}
	for i, t := range it.History {
		if !utf8.ValidString(t.Question) || !utf8.ValidString(t.Answer) {
			return fmt.Errorf("item %q: history turn %d is not valid UTF-8", it.ItemID, i+1)
		}
	}
	for i, r := range it.References {
		if !utf8.ValidString(r) {
			return fmt.Errorf("item %q: reference %d is not valid UTF-8", it.ItemID, i+1)
		}
	}
	return nil
}

// optionLetter is the label of an option "A. …", "A) …", "(A) …" or "A: …"; "" when it has none.
func optionLetter(o string) string {
	o = strings.TrimSpace(o)
	o = strings.TrimPrefix(o, "(")
	if len(o) < 2 || o[0] < 'A' || o[0] > 'Z' {
		return ""
	}
	switch o[1] {
	case '.', ')', ':':
		return o[:1]
	}
	return ""
}
