package items

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/internal/atomicfile"
)

// MaxImportBytes bounds the release file an import reads (Video-MME's parquet is ~1 MB, MLVU's
// largest task file a few MB).
const MaxImportBytes = 1 << 30

// ImportResult is what `framesweep items import` did.
type ImportResult struct {
	Format        string   `json:"format"`
	Source        string   `json:"source"`
	Out           string   `json:"out"`
	Items         int      `json:"items"`          // written to Out
	MissingVideos []string `json:"missing_videos"` // videos not found under --videos (their items are left out, listed here)
	MissingItems  int      `json:"missing_items"`  // items whose video is missing (left out unless --keep-missing)
}

// ImportOptions configure an import.
type ImportOptions struct {
	Format      string // videomme | mlvu | mlvu-gen | avsd | csv
	Videos      string // directory holding the videos
	KeepMissing bool   // write the items of missing videos too (the sweep records their pairs as errors)
	// AVSD: References is the multi-reference file of the test set; Turns is AVSDTurnsLast or
	// AVSDTurnsAll (avsd.go).
	References, Turns string
}

// Import converts a benchmark release file into canonical items. Video paths are written absolute.
func Import(src string, o ImportOptions) ([]Item, *ImportResult, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, nil, err
	}
	if st.Size() > MaxImportBytes {
		return nil, nil, fmt.Errorf("%s: %d bytes, over the %d-byte cap of an items release file", src, st.Size(), MaxImportBytes)
	}
	if o.Videos == "" {
		return nil, nil, errors.New("--videos DIR is required")
	}
	videos, err := filepath.Abs(o.Videos)
	if err != nil {
		return nil, nil, err
	}
	if st, err := os.Stat(videos); err != nil || !st.IsDir() {
		return nil, nil, fmt.Errorf("%s: not a directory of videos", o.Videos)
	}
	var items []Item
	switch o.Format {
	case "videomme":
		items, err = importVideoMME(src, videos)
	case "mlvu":
		items, err = importMLVU(src, videos)
	case "csv":
		items, err = importCSV(src, videos)
	case "mlvu-gen":
		items, err = importMLVUGen(src, videos)
	case "avsd":
		items, err = importAVSD(src, videos, o)
	default:
		return nil, nil, fmt.Errorf("format %q: want videomme, mlvu, mlvu-gen, avsd or csv", o.Format)
	}
	if err != nil {
		return nil, nil, err
	}
	res := &ImportResult{Format: o.Format, Source: src, MissingVideos: []string{}}
	seen := map[string]bool{}
	ids := map[string]bool{}
	var out []Item
	for _, it := range items {
		if ids[it.ItemID] {
			return nil, nil, fmt.Errorf("%s: item_id %q twice", src, it.ItemID)
		}
		ids[it.ItemID] = true
		if err := it.Validate(); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", src, err)
		}
		if st, err := os.Stat(it.Video); err != nil || !st.Mode().IsRegular() {
			if !seen[it.Video] {
				seen[it.Video] = true
				res.MissingVideos = append(res.MissingVideos, it.Video)
			}
			res.MissingItems++
			if !o.KeepMissing {
				continue
			}
		}
		out = append(out, it)
	}
	res.Items = len(out)
	return out, res, nil
}

// Write writes canonical ITEMS.jsonl atomically.
func Write(path string, items []Item) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := range items {
		if err := enc.Encode(&items[i]); err != nil {
			return err
		}
	}
	return atomicfile.Write(path, b.Bytes())
}

// findVideo resolves a video named by a release under dir: dir/name, else with the extensions
// lmms-eval tries (.mp4, .MP4, .mkv, .webm, .avi, .mov), else a file of that name anywhere below dir
// (MLVU keeps one folder per task). Not found: dir/name with the first extension, so it is listed.
type videoIndex struct {
	dir   string
	names map[string][]string // base name → paths below dir
}

func newVideoIndex(dir string) *videoIndex {
	vi := &videoIndex{dir: dir, names: map[string][]string{}}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			vi.names[d.Name()] = append(vi.names[d.Name()], p)
		}
		return nil
	})
	return vi
}

func (vi *videoIndex) find(name string, exts ...string) string {
	cands := []string{name}
	if filepath.Ext(name) == "" {
		cands = nil
		for _, e := range exts {
			cands = append(cands, name+e)
		}
	}
	for _, c := range cands {
		if st, err := os.Stat(filepath.Join(vi.dir, c)); err == nil && st.Mode().IsRegular() {
			return filepath.Join(vi.dir, c)
		}
	}
	for _, c := range cands {
		if ps := vi.names[filepath.Base(c)]; len(ps) == 1 {
			return ps[0]
		}
	}
	return filepath.Join(vi.dir, cands[0])
}

var videoExts = []string{".mp4", ".MP4", ".mkv", ".webm", ".avi", ".mov"}

// videoMMERow is one row of Video-MME's release (lmms-eval/Video-MME on the hub: videomme/test-*.parquet,
// the same fields in its JSON form).
type videoMMERow struct {
	VideoID     string   `parquet:"video_id,optional" json:"video_id"`
	Duration    string   `parquet:"duration,optional" json:"duration"`
	Domain      string   `parquet:"domain,optional" json:"domain"`
	SubCategory string   `parquet:"sub_category,optional" json:"sub_category"`
	VideoFile   string   `parquet:"videoID,optional" json:"videoID"`
	QuestionID  string   `parquet:"question_id,optional" json:"question_id"`
	TaskType    string   `parquet:"task_type,optional" json:"task_type"`
	Question    string   `parquet:"question,optional" json:"question"`
	Options     []string `parquet:"options,list,optional" json:"options"`
	Answer      string   `parquet:"answer,optional" json:"answer"`
}

// importVideoMME reads Video-MME's parquet or JSON (a list of rows, or JSON lines).
func importVideoMME(src, videos string) ([]Item, error) {
	var rows []videoMMERow
	var err error
	if isParquet(src) {
		rows, err = readParquet[videoMMERow](src)
	} else {
		err = readJSONRows(src, &rows)
	}
	if err != nil {
		return nil, err
	}
	vi := newVideoIndex(videos)
	out := make([]Item, 0, len(rows))
	for i, r := range rows {
		if r.QuestionID == "" || r.VideoFile == "" {
			return nil, fmt.Errorf("%s: row %d: no question_id or videoID (is this Video-MME's release?)", src, i+1)
		}
		out = append(out, Item{ItemID: r.QuestionID, Video: vi.find(r.VideoFile, videoExts...), Question: r.Question,
			Options: r.Options, Answer: strings.TrimSpace(r.Answer), Task: "videomme", Category: r.TaskType, Duration: r.Duration})
	}
	return out, nil
}

// mlvuRow is one question of an MLVU per-task JSON file (MLVU/json/*.json).
type mlvuRow struct {
	Video        string   `json:"video"`
	Duration     float64  `json:"duration"`
	Question     string   `json:"question"`
	Candidates   []string `json:"candidates"`
	Answer       string   `json:"answer"`
	QuestionType string   `json:"question_type"`
}

// importMLVU reads one MLVU task file. MLVU's answer is the text of the right candidate; the item's
// answer is its letter (options are "A. <candidate>" in the file's order, as lmms-eval shows them).
func importMLVU(src, videos string) ([]Item, error) {
	var rows []mlvuRow
	if err := readJSONRows(src, &rows); err != nil {
		return nil, err
	}
	stem := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
	vi := newVideoIndex(videos)
	out := make([]Item, 0, len(rows))
	for i, r := range rows {
		if r.Video == "" || r.Question == "" {
			return nil, fmt.Errorf("%s: row %d: no video or question (is this an MLVU task file?)", src, i+1)
		}
		it := Item{ItemID: fmt.Sprintf("mlvu-%s-%d", stem, i), Video: vi.find(r.Video, videoExts...), Question: r.Question,
			Task: "mlvu/" + r.QuestionType, Category: r.QuestionType, Template: "mlvu"}
		if r.Duration > 0 {
			d := r.Duration
			it.DurationS = &d
		}
		if len(r.Candidates) == 0 { // a generation task: the answer is the reference text
			it.Answer, it.Template = r.Answer, ""
			out = append(out, it)
			continue
		}
		letter := ""
		for k, c := range r.Candidates {
			it.Options = append(it.Options, fmt.Sprintf("%c. %s", 'A'+k, c))
			if c == r.Answer && letter == "" {
				letter = string(rune('A' + k))
			}
		}
		if letter == "" {
			return nil, fmt.Errorf("%s: row %d: answer %q is none of the candidates", src, i+1, r.Answer)
		}
		it.Answer = letter
		out = append(out, it)
	}
	return out, nil
}

// csvColumns are the columns a CSV import understands: the item fields, with options either as one
// "options" column (a JSON list) or as one column per letter (A, B, C, …).
var csvColumns = []string{"item_id", "video", "question", "options", "answer", "task", "category", "duration", "subtitles", "duration_s", "template"}

// importCSV reads a CSV with a header row (UTF-8, an optional BOM).
func importCSV(src, videos string) ([]Item, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))))
	r.FieldsPerRecord = 0
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: no header row: %v", src, err)
	}
	col := map[string]int{}
	var letters []string
	for i, h := range head {
		h = strings.TrimSpace(h)
		switch {
		case len(h) == 1 && h[0] >= 'A' && h[0] <= 'Z':
			letters = append(letters, h)
		case !contains(csvColumns, h):
			return nil, fmt.Errorf("%s: unknown column %q (known: %s, or option columns A, B, …)", src, h, strings.Join(csvColumns, ", "))
		}
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("%s: column %q twice", src, h)
		}
		col[h] = i
	}
	for _, need := range []string{"item_id", "video", "question", "answer"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s: no %q column", src, need)
		}
	}
	if _, ok := col["options"]; ok && len(letters) > 0 {
		return nil, fmt.Errorf("%s: both an options column and option columns %v", src, letters)
	}
	sort.Strings(letters)
	var out []Item
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", src, err)
		}
		get := func(k string) string {
			if i, ok := col[k]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		it := Item{ItemID: get("item_id"), Video: get("video"), Question: get("question"), Answer: get("answer"),
			Task: get("task"), Category: get("category"), Duration: get("duration"), Subtitles: get("subtitles"), Template: get("template")}
		if !filepath.IsAbs(it.Video) {
			it.Video = filepath.Join(videos, it.Video)
		}
		if v := get("duration_s"); v != "" {
			d, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: duration_s %q is not a number", src, line, v)
			}
			it.DurationS = &d
		}
		if v := get("options"); v != "" {
			if err := json.Unmarshal([]byte(v), &it.Options); err != nil {
				return nil, fmt.Errorf("%s:%d: options %q is not a JSON list of strings", src, line, v)
			}
		}
		for _, l := range letters {
			if v := strings.TrimSpace(rec[col[l]]); v != "" {
				it.Options = append(it.Options, l+". "+v)
			}
		}
		if err := it.Validate(); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", src, line, err)
		}
		out = append(out, it)
	}
	return out, nil
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// isParquet reports whether path starts with Parquet's magic.
func isParquet(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "PAR1"
}

// readJSONRows reads a JSON array of objects, or JSON lines.
func readJSONRows[T any](path string, out *[]T) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(t, out); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var r T
		if err := dec.Decode(&r); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		*out = append(*out, r)
	}
}
