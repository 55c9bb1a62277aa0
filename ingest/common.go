package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/framesweep/framesweep/record"
	"github.com/framesweep/framesweep/record/score"
)

// MaxFileBytes bounds what an importer reads from one file.
const MaxFileBytes = 1 << 30

// Options say which configuration the imported answers belong to and, for a log whose per-item
// verdict the importer does not know, how to read one. Verdicts are the harness's own by default; every
// other way of scoring is an explicit option.
type Options struct {
	Config string             // required: the config id of every record
	Meta   *record.ConfigMeta // optional: frames, text_only, width, height, policy
	// Task: the lmms-eval task name, or the VLMEvalKit dataset name, when the file name does not give it.
	Task string
	// ItemKey is what names an item: "doc" (default: "<task>:<doc_id>" for lmms-eval, the index column
	// for VLMEvalKit, the item column of a table), "question" (the benchmark's question id: lmms-eval's
	// payload or doc question_id, a question_id column), or any other field: a dotted path in an
	// lmms-eval sample ("doc_id", "doc.videoID"), a column of a table. ItemPrefix is put before every
	// id, so that two harnesses' ids of one release can meet (VLMEvalKit's 0 as lmms-eval's videomme:0).
	ItemKey, ItemPrefix string
	// OpenEnded scores each answer with Token-F1 against the target(s) (lmms-eval) or the answer
	// (VLMEvalKit); with CorrectFrom, the mapped field is a score in [0,1].
	OpenEnded bool
	// CorrectFrom names the field holding each sample's verdict when the importer does not know the
	// task's payload: a dotted path from the sample (lmms-eval: "my_metric.score") or a column
	// (VLMEvalKit); the value is true/false or 1/0.
	CorrectFrom string
	// PredField and AnswerField (together) score a payload the importer does not know by exact match of
	// two fields (dotted paths or columns), after trimming white space.
	PredField, AnswerField string
	// Rescore "text" replaces the harness's verdicts with this package's: the prediction's option letter,
	// or an option's text, against the gold answer's letter. The result says how many verdicts changed.
	Rescore string
	// Model names the model that answered, on every record (record.Record.Model).
	Model string
	// Durations groups a duration given in seconds (ParseDurationBins); nil keeps it as it is.
	Durations *DurationBins
	// Emit, when set, gets every record in file order, each validated and final, instead of
	// Result.Records (nil then); it is called only once the whole file is read and checked, so an
	// import refused for any line emits nothing. An lmms-eval samples file (JSON lines) that r can
	// read twice (a file) is read twice, once for the verdicts the aggregate needs and once for the
	// records, which are emitted one at a time: memory then holds what the aggregate reads of each
	// sample (lmmsKept, 72 bytes) instead of every record. Emit's error stops the import.
	Emit func(*record.Record) error
}

// RescoreText is the only Rescore mode.
const RescoreText = "text"

func (o Options) check(path string) error {
	bad := func(format string, a ...any) error {
		return record.Errorf(path, 0, "import", ErrBadArgs, format, a...)
	}
	switch {
	case o.Config == "":
		return bad("a config id is required")
	case strings.TrimSpace(o.ItemKey) != o.ItemKey:
		return bad("item key %q has surrounding spaces", o.ItemKey)
	case strings.ContainsAny(o.ItemPrefix, "\n\r"):
		return bad("item prefix %q spans lines", o.ItemPrefix)
	case (o.PredField == "") != (o.AnswerField == ""):
		return bad("the prediction and answer fields go together")
	case o.CorrectFrom != "" && o.PredField != "":
		return bad("a verdict field and a prediction/answer pair exclude each other")
	case o.Rescore != "" && o.Rescore != RescoreText:
		return bad("rescore mode %q is not %q", o.Rescore, RescoreText)
	case o.Rescore != "" && o.OpenEnded:
		return bad("rescoring by option text is for multiple-choice verdicts, not open-ended scores")
	case o.OpenEnded && o.PredField != "":
		return bad("open-ended Token-F1 scoring takes the response and target; use the verdict field for a mapped score")
	}
	return o.checkMeta(path)
}

// checkMeta holds the config_meta the options give every record to the record's rules (the flags'
// ranges: frames 0..131072, sides 1..65536) before any row is read.
func (o Options) checkMeta(path string) error {
	if o.Meta == nil {
		return nil
	}
	yes := true
	probe := record.Record{ItemID: "-", Config: o.Config, Correct: &yes, ConfigMeta: o.Meta}
	if err := probe.Validate(); err != nil {
		var re *record.Error
		if errors.As(err, &re) {
			err = re.Err
		}
		return record.Errorf(path, 0, "import", ErrBadArgs, "%v", err)
	}
	return nil
}

// Result is one imported file: its records, the harness's own aggregate (nil when it is not reproduced,
// with a note saying why) and remarks for the user.
type Result struct {
	// Records are the records, unless Options.Emit got them one at a time (an lmms-eval samples
	// file read twice): nil then.
	Records  []record.Record
	Imported int // the records imported
	// Of the records emitted one at a time: their task and the sum of their verdicts (scores), for
	// CheckReport.
	task      string
	hits      float64
	Aggregate *Aggregate
	Rescored  *RescoreCount // set with Options.Rescore
	Notes     []string      // one line each: rows the aggregate leaves out, why no aggregate, …
}

// Aggregate is the harness's own number for the file, computed with its rule (cited in Source) from its
// own per-item verdicts. It is stamped on every record (record.Harness) so the audit can show it.
type Aggregate struct {
	Harness string // "lmms-eval" or "VLMEvalKit"
	Task    string // lmms-eval task or VLMEvalKit dataset
	Metric  string // the key the harness's results file stores it under ("mlvu_percetion_score", "overall")
	Label   string // how it aggregates, e.g. "M-avg over 7 task types"
	Source  string // the upstream file whose rule it follows
	Kind    string // record.HarnessMicro, …
	Raw     float64
	Scale   float64 // Raw × Scale = points (100 when the harness reports a fraction)
	Counted int
	LeftOut int
}

// Points is the aggregate in points (0–100).
func (a *Aggregate) Points() float64 { return a.Raw * a.Scale }

// Name is the record-level metric name: harness, task, metric and rule.
func (a *Aggregate) Name() string {
	return fmt.Sprintf("%s %s %s (%s)", a.Harness, a.Task, a.Metric, a.Label)
}

// stamp puts the aggregate on every record; skip marks the records it leaves out.
func (a *Aggregate) stamp(recs []record.Record, skip []bool) {
	h := a.harness()
	for i := range recs {
		recs[i].Harness = h[b2i(skip[i])]
	}
}

// harness is the aggregate as records carry it: [0] on the records it counts, [1] on those it
// leaves out (every record shares one of the two).
func (a *Aggregate) harness() [2]*record.Harness {
	name := a.Name()
	var h [2]*record.Harness
	for k, skip := range [2]bool{false, true} {
		h[k] = &record.Harness{Metric: name, Kind: a.Kind, Value: a.Points(), Counted: a.Counted, LeftOut: a.LeftOut, Skip: skip}
	}
	return h
}

// emit hands the records to opt.Emit, when set (they stay in Records: a file read whole holds them
// anyway).
func (res *Result) emit(opt Options) error {
	res.Imported = len(res.Records)
	if opt.Emit == nil {
		return nil
	}
	for i := range res.Records {
		if err := opt.Emit(&res.Records[i]); err != nil {
			return err
		}
	}
	return nil
}

// taskName is the records' task.
func (res *Result) taskName() string {
	if len(res.Records) > 0 {
		return res.Records[0].Task
	}
	return res.task
}

// microPoints is 100 × the mean verdict (score) of the records.
func (res *Result) microPoints() float64 {
	if res.Records != nil {
		return microPoints(res.Records)
	}
	if res.Imported == 0 {
		return 0
	}
	return 100 * res.hits / float64(res.Imported)
}

// hit is a record's verdict as microPoints counts it.
func hit(r *record.Record) float64 {
	switch {
	case r.Correct != nil && *r.Correct:
		return 1
	case r.Score != nil:
		return *r.Score
	}
	return 0
}

// RescoreCount says what an opt-in rescore did.
type RescoreCount struct {
	Records    int // multiple-choice verdicts looked at
	Changed    int // verdicts that now differ from the harness's
	NowCorrect int // of those, wrong → correct
	NowWrong   int // correct → wrong
	NoOptions  int // kept as they were (wrong when there was no verdict): no gold answer in the log
	Unscored   int // had no harness verdict to compare with: scored here only
}

func (c *RescoreCount) String() string {
	s := fmt.Sprintf("--rescore text changed %d of %d harness verdicts (%d now correct, %d now wrong)", c.Changed, c.Records-c.Unscored-c.NoOptions, c.NowCorrect, c.NowWrong)
	if c.Unscored > 0 {
		s = fmt.Sprintf("--rescore text scored %d records that carry no harness verdict", c.Unscored)
		if c.Changed > 0 {
			s += fmt.Sprintf(" and changed %d harness verdicts", c.Changed)
		}
	}
	if c.NoOptions > 0 {
		s += fmt.Sprintf("; %d records have no gold answer to score against and kept their verdict", c.NoOptions)
	}
	return s
}

// lineHint is the number of lines left in r when it can be read twice (a file: counted, and r put
// back where it was), else 0. An importer makes its records' slice at that size once: growing it
// would hold every array it outgrew too (record.CountLines).
func lineHint(r io.Reader) int {
	rs, ok := r.(io.ReadSeeker)
	if !ok {
		return 0
	}
	at, err := rs.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0
	}
	n, err := record.CountLines(rs)
	if _, serr := rs.Seek(at, io.SeekStart); serr != nil || err != nil {
		return 0
	}
	return n
}

// readAll reads a whole harness file (bounded) without a leading UTF-8 byte order mark: logs and
// tables written on Windows carry one.
func readAll(r io.Reader, path string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, &record.Error{Path: path, Op: "read", Err: err}
	}
	if len(b) > MaxFileBytes {
		return nil, record.Errorf(path, 0, "read", record.ErrTooLong, "file over %d bytes", MaxFileBytes)
	}
	return record.TrimBOM(b), nil
}

// textOK refuses a harness file that is not valid UTF-8 (and, for JSON, holds an escaped lone
// surrogate or a key twice in one object: record.CheckJSON): a decoder would turn an invalid byte into
// U+FFFD, and two ids that differ only there into one item.
func textOK(data []byte, path string, isJSON bool) error {
	var err error
	if isJSON {
		err = record.CheckJSON(data)
	} else if !utf8.Valid(data) {
		err = fmt.Errorf("%w: not valid UTF-8", record.ErrSyntax)
	}
	if err != nil {
		return &record.Error{Path: path, Op: "read", Err: err}
	}
	return nil
}

var letterPrefix = regexp.MustCompile(`^\(?([A-Z])[.):]\s*`)

// stripLetter removes an "A. " style prefix from an option text.
func stripLetter(s string) string {
	return strings.TrimSpace(letterPrefix.ReplaceAllString(strings.TrimSpace(s), ""))
}

// choice maps an answer or prediction to an option letter: a bare letter or an explicit letter prefix
// ("B. …", "(B) …", "B) …"); else the text of one of the candidates (so "A dog" is the option whose text
// is "A dog", not option A); else a leading letter OptionLetter accepts ("Answer: B", "B is right");
// "" when none.
func choice(s string, candidates []string) string {
	t := strings.TrimSpace(s)
	if len(t) == 1 && t[0] >= 'A' && t[0] <= 'Z' {
		return t
	}
	if m := letterPrefix.FindStringSubmatch(t); m != nil {
		return m[1] // an explicit "(D) …" wins over the text that follows it
	}
	if t := strings.ToLower(stripLetter(s)); t != "" {
		for i, c := range candidates {
			if i < 26 && strings.ToLower(stripLetter(c)) == t {
				return candidateLetter(c, i)
			}
		}
	}
	return score.OptionLetter(s)
}

// candidateLetter is the letter of the i-th candidate: its own "A. " prefix, else its position.
func candidateLetter(c string, i int) string {
	if m := letterPrefix.FindStringSubmatch(strings.TrimSpace(c)); m != nil {
		return m[1]
	}
	return string(rune('A' + i))
}

// sameAnswer is exact match: option letters when both have one, else trimmed case-insensitive text.
func sameAnswer(pred, gold string, candidates []string) bool {
	gl, pl := choice(gold, candidates), choice(pred, candidates)
	if gl != "" {
		return pl == gl
	}
	return strings.EqualFold(strings.TrimSpace(pred), strings.TrimSpace(gold)) && strings.TrimSpace(gold) != ""
}

// scalarString renders a JSON scalar (string or number) as a string; other kinds give "".
func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// firstString digs the first string out of a string, list, or list of lists (lmms-eval resps shapes).
func firstString(v any) (string, bool) {
	for depth := 0; depth < 4; depth++ {
		switch x := v.(type) {
		case string:
			return x, true
		case []any:
			if len(x) == 0 {
				return "", false
			}
			v = x[0]
		default:
			if s := scalarString(x); s != "" {
				return s, true
			}
			return "", false
		}
	}
	return "", false
}

// stringsOf returns a string or the strings of a list (several references).
func stringsOf(v any) []string {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			if s := scalarString(e); s != "" || e == "" {
				out = append(out, s)
			}
		}
		return out
	default:
		if s := scalarString(x); s != "" {
			return []string{s}
		}
	}
	return nil
}

func newRecord(opt Options, item string) record.Record {
	// opt.Meta is the import's own copy (LmmsEval, VLMEvalKit make it), shared by every record.
	return record.Record{ItemID: opt.ItemPrefix + item, Config: opt.Config, ConfigMeta: opt.Meta, Model: opt.Model}
}

// byDoc reports whether items are named by the importer's own key (ItemKey "" or "doc").
func (o Options) byDoc() bool { return o.ItemKey == "" || o.ItemKey == "doc" }

func fmtErr(path string, line int, format string, a ...any) error {
	return record.Errorf(path, line, "import", record.ErrSyntax, format, a...)
}
