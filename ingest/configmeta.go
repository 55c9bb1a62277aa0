package ingest

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/framesweep/framesweep/ingest/pyval"
	"github.com/framesweep/framesweep/record"
)

// A config's budget, where a table does not give it in columns, comes from its name or from the
// user (--config-meta, --config-meta-file). A name that says nothing leaves the cost unknown: never
// guessed, never 0.

// reTextName is a config name that says text only; reBudgetName one that starts with a frame budget:
// 16, f16, 16f, 16frame(s), frames16, frames_16, nframe16, then (after _ or -, not after a bare number)
// anything, of which budgetSuffix reads a per-frame size: 16f_151k, 128f_input224, f16_448x448.
var (
	reTextName   = regexp.MustCompile(`(?i)^(?:text|text[-_ ]?only|no[-_ ]?video|no[-_ ]?visual|no[-_ ]?vision|blind|0f|f0|0frames?)$`)
	reBudgetName = regexp.MustCompile(`(?i)^(?:(?:f|frames?_?|nframes?_?)(\d{1,6})|(\d{1,6})(?:f|frames?)|(\d{1,6}))(?:[-_](.+))?$`)
	reKiloPixels = regexp.MustCompile(`(?i)^(\d{1,7})k$`)
	reInputSide  = regexp.MustCompile(`(?i)^input[-_]?(\d{1,6})$`)
	reSize       = regexp.MustCompile(`(?i)^(\d{1,6})[x×](\d{1,6})$`)
)

// configFromName is the config_meta a config's name gives: text_only (frames 0) of a text-only name;
// frames of a budget name, with the per-frame size its suffix gives ({N}f_{K}k: max_pixels K·1000;
// {N}f_input{S}: S×S; {N}f_{W}x{H}); nil when it gives none or a number out of range.
func configFromName(name string) *record.ConfigMeta {
	if reTextName.MatchString(name) {
		t, z := true, 0
		return &record.ConfigMeta{TextOnly: &t, Frames: &z}
	}
	m := reBudgetName.FindStringSubmatch(name)
	if m == nil || (m[3] != "" && m[4] != "") { // a bare number names a budget only alone
		return nil
	}
	n, _ := strconv.Atoi(m[1] + m[2] + m[3])
	if n < 1 || n > record.MaxFrames {
		return nil
	}
	meta := &record.ConfigMeta{Frames: &n}
	if !budgetSuffix(m[4], meta) {
		return nil
	}
	return meta
}

// budgetSuffix reads the per-frame size a budget name's suffix gives into meta; false when the suffix
// has the form of one but a number out of range (the name then gives nothing). Any other suffix
// (_uniform, _subs) gives no size.
func budgetSuffix(s string, meta *record.ConfigMeta) bool {
	if m := reKiloPixels.FindStringSubmatch(s); m != nil {
		k, _ := strconv.Atoi(m[1])
		px := k * 1000
		meta.MaxPixels = &px
		return record.MaxPixelsRange.CheckInt(int64(px)) == nil
	}
	if m := reInputSide.FindStringSubmatch(s); m != nil {
		side, _ := strconv.Atoi(m[1])
		w, h := side, side
		meta.Width, meta.Height = &w, &h
		return record.SideRange.CheckInt(int64(side)) == nil
	}
	if m := reSize.FindStringSubmatch(s); m != nil {
		w, _ := strconv.Atoi(m[1])
		h, _ := strconv.Atoi(m[2])
		meta.Width, meta.Height = &w, &h
		return record.SideRange.CheckInt(int64(w)) == nil && record.SideRange.CheckInt(int64(h)) == nil
	}
	return true
}

// ConfigMetaKeys are the keys of --config-meta CONFIG=KEY:VALUE,… and the columns of a
// --config-meta-file table (beside config).
var ConfigMetaKeys = []string{"frames", "max_pixels", "width", "height", "text_only"}

// ParseConfigMeta reads one --config-meta value, CONFIG=frames:16,max_pixels:151200 (keys:
// ConfigMetaKeys), into the config's id and config_meta; the numbers are held to the flags' ranges.
func ParseConfigMeta(s string) (string, *record.ConfigMeta, error) {
	i := strings.LastIndex(s, "=")
	config, spec := "", ""
	if i >= 0 {
		config, spec = strings.TrimSpace(s[:i]), s[i+1:]
	}
	if config == "" || strings.TrimSpace(spec) == "" {
		return "", nil, fmt.Errorf("--config-meta %q: want CONFIG=frames:N[,max_pixels:N][,width:W,height:H][,text_only:true]", s)
	}
	fields := map[string]string{}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(kv, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case !ok || v == "":
			return "", nil, fmt.Errorf("--config-meta %q: %q is not KEY:VALUE (keys: %s)", s, kv, strings.Join(ConfigMetaKeys, ", "))
		case !isMetaKey(k):
			return "", nil, fmt.Errorf("--config-meta %q: unknown key %q (keys: %s)", s, k, strings.Join(ConfigMetaKeys, ", "))
		case fields[k] != "":
			return "", nil, fmt.Errorf("--config-meta %q: %s twice", s, k)
		}
		fields[k] = v
	}
	m, err := metaFromFields(fields)
	if err != nil {
		return "", nil, fmt.Errorf("--config-meta %q: %v", s, err)
	}
	return config, m, nil
}

func isMetaKey(k string) bool {
	for _, x := range ConfigMetaKeys {
		if k == x {
			return true
		}
	}
	return false
}

// metaFromFields builds a config_meta from its fields' texts (keys: ConfigMetaKeys; an empty text is
// unknown): integers in the flags' ranges, width with height, text_only with no frames other than 0
// and no size (frames 0 alone says text only).
func metaFromFields(f map[string]string) (*record.ConfigMeta, error) {
	m := &record.ConfigMeta{}
	var err error
	for _, x := range []struct {
		key string
		dst **int
		rng interface {
			CheckInt(int64) error
		}
	}{{"frames", &m.Frames, record.FramesRange}, {"max_pixels", &m.MaxPixels, record.MaxPixelsRange},
		{"width", &m.Width, record.SideRange}, {"height", &m.Height, record.SideRange}} {
		if *x.dst, err = metaInt(x.key, f[x.key], x.rng); err != nil {
			return nil, err
		}
	}
	if c := f["text_only"]; c != "" {
		v, ok := tableVerdict(c)
		if !ok {
			return nil, fmt.Errorf("text_only %q is not true/false", c)
		}
		m.TextOnly = &v
	}
	if m.Frames != nil && *m.Frames == 0 && m.TextOnly == nil {
		t := true
		m.TextOnly = &t // frames 0: no visual input
	}
	text := m.TextOnly != nil && *m.TextOnly
	switch {
	case (m.Width == nil) != (m.Height == nil):
		return nil, fmt.Errorf("width and height go together")
	case text && m.Frames != nil && *m.Frames != 0:
		return nil, fmt.Errorf("text_only with frames %d", *m.Frames)
	case text && (m.MaxPixels != nil || m.Width != nil):
		return nil, fmt.Errorf("text_only with a frame size (max_pixels, width/height)")
	case !text && m.TextOnly != nil && m.Frames != nil && *m.Frames == 0:
		return nil, fmt.Errorf("frames 0 with text_only false")
	case text:
		z := 0
		m.Frames = &z
	}
	return m, nil
}

// metaInt reads an integer field of a config_meta ("" is unknown: nil), in range; a float that is an
// integer (16.0, as pandas writes a column with gaps) is one.
func metaInt(name, c string, r interface{ CheckInt(int64) error }) (*int, error) {
	if c == "" {
		return nil, nil
	}
	v, err := strconv.ParseInt(c, 10, 64)
	if err != nil {
		fv, ok := pyval.Float(c)
		if !ok || fv != float64(int64(fv)) || fv > 1<<53 || fv < -(1<<53) {
			return nil, fmt.Errorf("%s %q is not an integer", name, c)
		}
		v = int64(fv)
	}
	if err := r.CheckInt(v); err != nil {
		return nil, fmt.Errorf("%s %d: %v", name, v, err)
	}
	n := int(v)
	return &n, nil
}

// ReadConfigMetaTable reads a --config-meta-file: a table (any format `import table` reads) with a
// config column and any of the columns ConfigMetaKeys (or their table aliases: frame_count,
// pixel_count, …; size as WxH); one row per config, an empty cell unknown.
func ReadConfigMetaTable(r io.Reader, path string) (map[string]*record.ConfigMeta, error) {
	data, err := readAll(r, path)
	if err != nil {
		return nil, err
	}
	header, rows, err := readTable(data, path)
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		f := aliasField(h)
		if f != "config" && f != "size" && !isMetaKey(f) {
			return nil, record.Errorf(path, 1, "import", record.ErrFormat, "config_meta table: unknown column %q (columns: config, %s, size)", h, strings.Join(ConfigMetaKeys, ", "))
		}
		if _, dup := col[f]; dup {
			return nil, record.Errorf(path, 1, "import", record.ErrFormat, "config_meta table: two columns give %s", f)
		}
		col[f] = i
	}
	if _, ok := col["config"]; !ok {
		return nil, record.Errorf(path, 1, "import", record.ErrFormat, "config_meta table: no config column (columns: %q)", header)
	}
	out := map[string]*record.ConfigMeta{}
	for ri, row := range rows {
		if blankRow(row) {
			continue
		}
		line, fields := ri+2, map[string]string{}
		for f, i := range col {
			fields[f] = strings.TrimSpace(row[i])
		}
		config := fields["config"]
		if s := fields["size"]; s != "" {
			w, h, ok := parseSize(s)
			if !ok {
				return nil, record.Errorf(path, line, "import", record.ErrInvalid, "size %q is not WxH", s)
			}
			fields["width"], fields["height"] = strconv.Itoa(w), strconv.Itoa(h)
		}
		m, err := metaFromFields(fields)
		switch {
		case config == "":
			return nil, record.Errorf(path, line, "import", record.ErrInvalid, "no config")
		case out[config] != nil:
			return nil, record.Errorf(path, line, "import", record.ErrDuplicate, "config %q twice", config)
		case err != nil:
			return nil, record.Errorf(path, line, "import", record.ErrInvalid, "config %q: %v", config, err)
		}
		out[config] = m
	}
	if len(out) == 0 {
		return nil, record.Errorf(path, 0, "import", record.ErrEmpty, "config_meta table: no rows")
	}
	return out, nil
}

// mergeMeta is a row's config_meta from its columns (cols) with what --config-meta says of its config
// (over): the fields of both, an error naming the first field they disagree on.
func mergeMeta(cols, over *record.ConfigMeta) (*record.ConfigMeta, error) {
	if over == nil {
		return cols, nil
	}
	out := *cols
	for _, f := range []struct {
		name     string
		dst, src **int
	}{{"frames", &out.Frames, &over.Frames}, {"max_pixels", &out.MaxPixels, &over.MaxPixels}, {"width", &out.Width, &over.Width}, {"height", &out.Height, &over.Height}} {
		switch {
		case *f.src == nil:
		case *f.dst == nil:
			*f.dst = *f.src
		case **f.dst != **f.src:
			return nil, fmt.Errorf("%s %d in the row's columns, %d by --config-meta", f.name, **f.dst, **f.src)
		}
	}
	switch {
	case over.TextOnly == nil:
	case out.TextOnly == nil:
		out.TextOnly = over.TextOnly
	case *out.TextOnly != *over.TextOnly:
		return nil, fmt.Errorf("text_only %v in the row's columns, %v by --config-meta", *out.TextOnly, *over.TextOnly)
	}
	return &out, nil
}

// unusedMeta names the --config-meta configs no record of the table has ("" when every one is used).
func unusedMeta(over map[string]*record.ConfigMeta, used map[string]*metaSeen) string {
	var out []string
	for c := range over {
		if used[c] == nil {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
