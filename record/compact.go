package record

// What a reader holds per record. The audit holds every record in memory (its analyses pair them), so
// the readers (Read, ReadFile, ReadPaths) keep each record compact: the values many records repeat are
// held once and shared. A decoded record's strings that repeat (config, status, answer, prediction,
// category, duration, task, error and its kind, model, weights digest, a harness's metric), its origin (per value), its
// config_meta (per config, unless it carries the record's own frame indices), its harness (per file),
// and the targets of its bool pointers and context size point to one copy each. What is left per
// record is the Record itself (368 bytes), its visual_tokens when it has one, its item id and question id, and its numbers (confidence,
// latency: 8 bytes each); docs/audit.md states the measured figure. Treat the pointer fields of records read this way as read-only (assign a new pointer to
// change one).

// compactor holds the shared copies of one read. It is used by one goroutine at a time.
type compactor struct {
	strs    map[string]string
	ints    map[int]*int
	metas   map[metaKey]*ConfigMeta
	harness map[Harness]*Harness
	origins map[Origin]*Origin
	// The shared config_meta and harness of each exact text they were read from: a line whose text is
	// one of these is not decoded again (its value is blanked to null and the shared copy set).
	rawMeta    map[string]*ConfigMeta
	rawHarness map[string]*Harness
	full       Full // the line being decoded (its provenance is validated, then let go)
}

// sharedKeys are the top-level keys whose values decode lines from their text: config_meta, harness.
var sharedKeys = []string{"config_meta", "harness"}

// metaKey is a ConfigMeta without its indices, by value.
type metaKey struct {
	frames, width, height, maxPix  int
	seed                           int64
	has                            uint8 // bits: frames, text_only, width, height, seed, max_pixels
	textOnly                       bool
	policy, preset, pipeln, loader string
}

func newCompactor() *compactor {
	return &compactor{strs: map[string]string{}, ints: map[int]*int{}, metas: map[metaKey]*ConfigMeta{}, harness: map[Harness]*Harness{},
		origins: map[Origin]*Origin{}, rawMeta: map[string]*ConfigMeta{}, rawHarness: map[string]*Harness{}}
}

var (
	sharedTrue  = true
	sharedFalse = false
)

// maxInterned bounds the strings one read shares: beyond it, new strings are kept as decoded (a file
// of unique predictions would otherwise grow the table without saving anything).
const maxInterned = 1 << 16

func (c *compactor) str(s string) string {
	if s == "" {
		return ""
	}
	if t, ok := c.strs[s]; ok {
		return t
	}
	if len(c.strs) < maxInterned {
		c.strs[s] = s
	}
	return s
}

// int shares the targets of int pointers by value (a model's context size repeats on its records).
func (c *compactor) int(p *int) *int {
	if p == nil {
		return nil
	}
	if q, ok := c.ints[*p]; ok {
		return q
	}
	if len(c.ints) < maxInterned {
		c.ints[*p] = p
	}
	return p
}

func sharedBool(p *bool) *bool {
	switch {
	case p == nil:
		return nil
	case *p:
		return &sharedTrue
	}
	return &sharedFalse
}

// decode decodes one checked line into r, compact: the config_meta and harness whose text an earlier
// line had are not decoded again. The line's bytes may be changed (those values blanked).
func (c *compactor) decode(line []byte, spans []span, r *Full) error {
	var meta *ConfigMeta
	var h *Harness
	if sp := spans[0]; sp.found() {
		if meta = c.rawMeta[string(line[sp.from:sp.to])]; meta != nil {
			blank(line[sp.from:sp.to])
		}
	}
	if sp := spans[1]; sp.found() {
		if h = c.rawHarness[string(line[sp.from:sp.to])]; h != nil {
			blank(line[sp.from:sp.to])
		}
	}
	if err := decodeFull(line, r); err != nil {
		return err
	}
	if meta != nil {
		r.ConfigMeta = meta
	}
	if h != nil {
		r.Harness = h
	}
	return nil
}

// keep records the shared copies of r's config_meta and harness under the texts they were decoded
// from (a meta with indices is the record's own).
func (c *compactor) keep(line []byte, spans []span, r *Record) {
	// A value blanked by decode (its text was known) is not a new text.
	if sp := spans[0]; sp.found() && line[sp.from] != 'n' && r.ConfigMeta != nil && len(r.ConfigMeta.Indices) == 0 && len(c.rawMeta) < maxInterned {
		if _, ok := c.rawMeta[string(line[sp.from:sp.to])]; !ok {
			c.rawMeta[string(line[sp.from:sp.to])] = r.ConfigMeta
		}
	}
	if sp := spans[1]; sp.found() && line[sp.from] != 'n' && r.Harness != nil && len(c.rawHarness) < maxInterned {
		if _, ok := c.rawHarness[string(line[sp.from:sp.to])]; !ok {
			c.rawHarness[string(line[sp.from:sp.to])] = r.Harness
		}
	}
}

// blank overwrites a JSON value with null and spaces (the same length: the line stays one value).
func blank(b []byte) {
	copy(b, "null")
	for i := 4; i < len(b); i++ {
		b[i] = ' '
	}
}

// record makes r compact.
func (c *compactor) record(r *Record) {
	r.Config, r.Status, r.Answer, r.Prediction = c.str(r.Config), c.str(r.Status), c.str(r.Answer), c.str(r.Prediction)
	r.Category, r.Duration, r.Task, r.Error = c.str(r.Category), c.str(r.Duration), c.str(r.Task), c.str(r.Error)
	r.ErrorKind, r.Model, r.WeightsSHA256 = c.str(r.ErrorKind), c.str(r.Model), c.str(r.WeightsSHA256)
	r.Correct = sharedBool(r.Correct)
	if v := r.VisualTokens; v != nil {
		v.How, v.Family, v.Why = c.str(v.How), c.str(v.Family), c.str(v.Why)
	}
	r.ContextTokens = c.int(r.ContextTokens)
	if r.ConfigMeta != nil {
		r.ConfigMeta = c.meta(r.ConfigMeta)
	}
	if h := r.Harness; h != nil {
		h.Metric, h.Kind = c.str(h.Metric), c.str(h.Kind)
		if s, ok := c.harness[*h]; ok {
			r.Harness = s
		} else if len(c.harness) < maxInterned {
			c.harness[*h] = h
		}
	}
	if o := r.Origin; o != nil {
		if s, ok := c.origins[*o]; ok {
			r.Origin = s
		} else if len(c.origins) < maxInterned {
			c.origins[*o] = o
		}
	}
}

// meta shares m with the records of its config: the one copy of its values when it carries no
// indices, else m with its pointers into that copy.
func (c *compactor) meta(m *ConfigMeta) *ConfigMeta {
	k := metaKey{policy: c.str(m.Policy), preset: c.str(m.Preset), pipeln: c.str(m.Pipeline), loader: c.str(m.Loader)}
	if m.Frames != nil {
		k.frames, k.has = *m.Frames, k.has|1
	}
	if m.TextOnly != nil {
		k.textOnly, k.has = *m.TextOnly, k.has|2
	}
	if m.Width != nil {
		k.width, k.has = *m.Width, k.has|4
	}
	if m.Height != nil {
		k.height, k.has = *m.Height, k.has|8
	}
	if m.Seed != nil {
		k.seed, k.has = *m.Seed, k.has|16
	}
	if m.MaxPixels != nil {
		k.maxPix, k.has = *m.MaxPixels, k.has|32
	}
	s, ok := c.metas[k]
	if !ok {
		if len(c.metas) >= maxInterned {
			return m
		}
		s = &ConfigMeta{Frames: m.Frames, TextOnly: sharedBool(m.TextOnly), Width: m.Width, Height: m.Height, Seed: m.Seed,
			Policy: k.policy, Preset: k.preset, Pipeline: k.pipeln, Loader: k.loader, MaxPixels: m.MaxPixels}
		c.metas[k] = s
	}
	if len(m.Indices) == 0 {
		return s
	}
	out := *s
	out.Indices = m.Indices
	return &out
}
