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
	"strings"
	"unicode/utf8"

	"github.com/framesweep/framesweep/internal/atomicfile"
	"github.com/framesweep/framesweep/internal/num"
	"github.com/framesweep/framesweep/record"
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
	MissingVideos []string `json:"missing_videos"` // videos not found under --video-dir (their items are left out, listed here)
	MissingItems  int      `json:"missing_items"`  // items whose video is missing (left out unless --keep-missing)
}

// ImportOptions configure an import.
type ImportOptions struct {
	Format      string // videomme | mlvu | mlvu-gen | avsd | csv
	Videos      string // directory holding the videos
	KeepMissing bool   // write the items of missing videos too (the sweep records their pairs as errors)
	// Map names the release's key (or column) of a field it names otherwise (--map FIELD=KEY), Ignore
	// the keys to leave out knowingly (--ignore KEY): any other key the format does not know is an
	// error.
	Map    map[string]string
	Ignore []string
	// Templates are the prompt templates a sweep accepts (llm.TemplateIDs); an item naming another is
	// an error. nil: not checked.
	Templates []string
	// AVSD: References is the multi-reference file of the test set; Turns is AVSDTurnsLast or
	// AVSDTurnsAll (avsd.go).
	References, Turns string
	// Template is the prompt template of the multiple-choice items: "" keeps the benchmark's
	// (videomme → videomme, mlvu → mlvu, csv → its template column), TemplateNone leaves it to the
	// sweep's --template, any other id is set on every multiple-choice item.
	Template string
}

// TemplateNone is ImportOptions.Template for items that name no template.
const TemplateNone = "none"

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
		return nil, nil, errors.New("--video-dir DIR is required")
	}
	videos, err := filepath.Abs(o.Videos)
	if err != nil {
		return nil, nil, err
	}
	if st, err := os.Stat(videos); err != nil || !st.IsDir() {
		return nil, nil, fmt.Errorf("%s: not a directory of videos", o.Videos)
	}
	items, err := importRows(src, videos, o)
	if err != nil {
		return nil, nil, err
	}
	if o.Template != "" {
		t := o.Template
		if t == TemplateNone {
			t = ""
		}
		for i := range items {
			if items[i].MultipleChoice() {
				items[i].Template = t
			}
		}
	}
	return keepFound(src, videos, items, o)
}

// importRows reads the release's items by its format.
func importRows(src, videos string, o ImportOptions) ([]Item, error) {
	switch o.Format {
	case "videomme":
		return importVideoMME(src, videos, o)
	case "mlvu":
		return importMLVU(src, videos, o)
	case "csv":
		return importCSV(src, videos, o)
	case "mlvu-gen":
		return importMLVUGen(src, videos, o)
	case "avsd":
		return importAVSD(src, videos, o)
	}
	return nil, fmt.Errorf("format %q: want videomme, mlvu, mlvu-gen, avsd or csv", o.Format)
}

// keepFound checks the imported items (each valid, ids unique, templates a sweep accepts) and keeps
// those whose video is found under videos; the others are listed (a path that leaves videos, by ".."
// or as an absolute path elsewhere, counts as not found), and kept only with KeepMissing.
func keepFound(src, videos string, items []Item, o ImportOptions) ([]Item, *ImportResult, error) {
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
		if err := fitsLine(&it); err != nil { // refused here, not by the sweep that reads the file
			return nil, nil, fmt.Errorf("%s: %w", src, err)
		}
		if o.Templates != nil && it.Template != "" && !contains(o.Templates, it.Template) {
			return nil, nil, fmt.Errorf("%s: item %q: template %q is none a sweep accepts (%s)", src, it.ItemID, it.Template, strings.Join(o.Templates, ", "))
		}
		if st, err := os.Stat(it.Video); err != nil || !st.Mode().IsRegular() || !within(videos, it.Video) {
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

// within reports whether path lies below dir, by name (the videos of a release may be symbolic
// links to elsewhere; what is checked is that the release's names do not climb out of --video-dir).
func within(dir, path string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Write writes canonical ITEMS.jsonl atomically; an item whose line Read would refuse (over MaxLine)
// is an error and nothing is written.
func Write(path string, items []Item) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := range items {
		start := b.Len()
		if err := enc.Encode(&items[i]); err != nil {
			return err
		}
		if n := b.Len() - start; n > MaxLine {
			return fmt.Errorf("%s: %w", path, lineErr(&items[i], n))
		}
	}
	return atomicfile.Write(path, b.Bytes())
}

// fitsLine refuses an item whose ITEMS.jsonl line would be over MaxLine, the limit Read (the
// sweep) holds every line to: the import refuses what the sweep would refuse. The line is counted as
// Write encodes it, newline included, as Read counts it.
func fitsLine(it *Item) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(it); err != nil {
		return err
	}
	if b.Len() > MaxLine {
		return lineErr(it, b.Len())
	}
	return nil
}

func lineErr(it *Item, n int) error {
	return fmt.Errorf("item %q: its line would be %d bytes, over the %d-byte line limit of an items file (the sweep refuses it)", it.ItemID, n, MaxLine)
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

// importVideoMME reads Video-MME's parquet or JSON (a list of rows, or JSON lines), strictly
// (videoMMESchema: every key or column known and typed). Its items name the videomme template.
func importVideoMME(src, videos string, o ImportOptions) ([]Item, error) {
	km, err := newKeyMap(&videoMMESchema, o)
	if err != nil {
		return nil, err
	}
	var rows []row
	if isParquet(src) {
		rows, err = readParquetRows(src, &videoMMESchema, km)
	} else {
		rows, err = readJSONRows(src, &videoMMESchema, km)
	}
	if err != nil {
		return nil, err
	}
	vi := newVideoIndex(videos)
	out := make([]Item, 0, len(rows))
	for _, r := range rows {
		out = append(out, Item{ItemID: r.str("question_id"), Video: vi.find(r.str("videoID"), videoExts...), Question: r.str("question"),
			Options: r.list("options"), Answer: strings.TrimSpace(r.str("answer")), Task: "videomme", Category: r.str("task_type"), Duration: r.str("duration"),
			Template: "videomme"}) // the official prompt and extract_characters_regex, as the MLVU import sets mlvu
	}
	return out, nil
}

// importMLVU reads one MLVU task file, strictly (mlvuSchema). MLVU's answer is the text of the right
// candidate; the item's answer is its letter (options are "A. <candidate>" in the file's order, as
// lmms-eval shows them). A question without candidates (a generation task) keeps the reference text.
func importMLVU(src, videos string, o ImportOptions) ([]Item, error) {
	km, err := newKeyMap(&mlvuSchema, o)
	if err != nil {
		return nil, err
	}
	rows, err := readJSONRows(src, &mlvuSchema, km)
	if err != nil {
		return nil, err
	}
	stem := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
	vi := newVideoIndex(videos)
	out := make([]Item, 0, len(rows))
	for i, r := range rows {
		qt := r.str("question_type")
		it := Item{ItemID: fmt.Sprintf("mlvu-%s-%d", stem, i), Video: vi.find(r.str("video"), videoExts...), Question: r.str("question"),
			Task: "mlvu/" + qt, Category: qt, Template: "mlvu"}
		if d := r.number("duration"); d > 0 {
			it.DurationS = &d
		}
		cands := r.list("candidates")
		if len(cands) == 0 { // a generation task: the answer is the reference text
			it.Answer, it.Template = r.str("answer"), ""
			out = append(out, it)
			continue
		}
		letter := ""
		for k, c := range cands {
			it.Options = append(it.Options, fmt.Sprintf("%c. %s", 'A'+k, c))
			if c == r.str("answer") && letter == "" {
				letter = string(rune('A' + k))
			}
		}
		if letter == "" {
			return nil, fmt.Errorf("%s: row %d: answer %q is none of the candidates", src, i+1, r.str("answer"))
		}
		it.Answer = letter
		out = append(out, it)
	}
	return out, nil
}

// csvColumns are the columns a CSV import understands: the item fields, with options either as one
// "options" column (a JSON list) or as one column per letter (A, B, C, …).
var csvColumns = []string{"item_id", "video", "question", "options", "answer", "task", "category", "duration", "subtitles", "duration_s", "template"}

// importCSV reads a CSV with a header row (UTF-8, an optional BOM): every column one it knows (after
// --map; --ignore leaves one out), the required ones present, every byte valid UTF-8.
func importCSV(src, videos string, o ImportOptions) ([]Item, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	b = record.TrimBOM(b)
	if !utf8.Valid(b) {
		i := record.InvalidUTF8At(b)
		return nil, fmt.Errorf("%s:%d: not valid UTF-8 (byte %d): ids that differ only in an invalid byte would become one", src, bytes.Count(b[:i], []byte("\n"))+1, i)
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = 0
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: no header row: %v", src, err)
	}
	col, letters, err := csvHeader(src, head, o)
	if err != nil {
		return nil, err
	}
	var out []Item
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", src, err)
		}
		it, err := csvItem(rec, col, letters, videos)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", src, line, err)
		}
		out = append(out, it)
	}
	return out, nil
}

// csvHeader reads the header: each column's field (its own name, or the field --map gives it) and the
// option letter columns in order.
func csvHeader(src string, head []string, o ImportOptions) (map[string]int, []string, error) {
	field := map[string]string{}
	for f, c := range o.Map {
		if !contains(csvColumns, f) {
			return nil, nil, fmt.Errorf("--map %s=%s: a CSV has no field %q (fields: %s)", f, c, f, strings.Join(csvColumns, ", "))
		}
		field[c] = f
	}
	col := map[string]int{}
	var letters []string
	for i, h := range head {
		h = strings.TrimSpace(h)
		if contains(o.Ignore, h) {
			continue
		}
		if f, ok := field[h]; ok {
			h = f
		}
		switch {
		case len(h) == 1 && h[0] >= 'A' && h[0] <= 'Z':
			letters = append(letters, h)
		case !contains(csvColumns, h):
			return nil, nil, fmt.Errorf("%s: unknown column %q (known: %s, or option columns A, B, …; a field named otherwise: --map FIELD=%s; a column to leave out: --ignore %s)",
				src, h, strings.Join(csvColumns, ", "), h, h)
		}
		if _, dup := col[h]; dup {
			return nil, nil, fmt.Errorf("%s: column %q twice", src, h)
		}
		col[h] = i
	}
	for _, need := range []string{"item_id", "video", "question", "answer"} {
		if _, ok := col[need]; !ok {
			return nil, nil, fmt.Errorf("%s: no %q column (if the file names it otherwise: --map %s=COLUMN)", src, need, need)
		}
	}
	if _, ok := col["options"]; ok && len(letters) > 0 {
		return nil, nil, fmt.Errorf("%s: both an options column and option columns %v", src, letters)
	}
	sort.Strings(letters)
	return col, letters, nil
}

// csvItem is one CSV row's item; relative videos are under videos.
func csvItem(rec []string, col map[string]int, letters []string, videos string) (Item, error) {
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
		d, err := num.AtLeast(0).ParseFloat("duration_s", v) // "Inf" parses, and JSON cannot hold it
		if err != nil {
			return it, err
		}
		it.DurationS = &d
	}
	if v := get("options"); v != "" {
		if err := json.Unmarshal([]byte(v), &it.Options); err != nil {
			return it, fmt.Errorf("options %q is not a JSON list of strings", v)
		}
		if len(it.Options) == 0 { // an empty cell is an open-ended row; "[]" says options and gives none
			return it, fmt.Errorf("options %q is an empty list (a multiple-choice row needs its options; leave the cell empty for an open-ended one)", v)
		}
	}
	for _, l := range letters {
		if v := strings.TrimSpace(rec[col[l]]); v != "" {
			it.Options = append(it.Options, l+". "+v)
		}
	}
	return it, it.Validate()
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
