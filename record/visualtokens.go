package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// VisualTokens is a record's check that the model saw the frames fed (docs/runtimes.md "Did the
// server see our frames?"): the visual tokens its family's arithmetic expects of the input, those the
// model counted (in process: the embeddings mtmd built; from a server: usage.prompt_tokens minus the
// same item's text-only prompt, less the template's fixed Overhead), how the latter was found, and
// why either is unknown (null). The audit reads it: a config whose counts part warns.
//
// Records written before the check carry "visual_tokens" as a bare count (the embeddings an
// in-process runtime built); they read as Seen with How "runtime" and no expected count.
type VisualTokens struct {
	Expected *int   `json:"expected"`
	Seen     *int   `json:"seen"`
	How      string `json:"how"`
	Family   string `json:"family,omitempty"`
	Overhead int    `json:"overhead,omitempty"`
	Why      string `json:"why,omitempty"`
}

// Values a sweep writes (llm.VisualHows and llm.Families; sweep's TestProvenanceValueSets holds the
// lists equal: record does not import llm).
var (
	VisualHows     = []string{"runtime", "text-only difference", "tokenize", "two visual configs", "unknown"}
	VisualFamilies = []string{"qwen2-vl", "qwen2.5-vl", "qwen3-vl", "internvl", "llava-next-video", "llava"}
)

// VisualRuntime is the How of a count an in-process runtime built; VisualUnknown of a seen count
// not found.
const (
	VisualRuntime = "runtime"
	VisualUnknown = "unknown"
)

// The band a server's seen/expected ratio stays in; an in-process runtime's two counts are equal.
const (
	VisualLow  = 0.95
	VisualHigh = 1.05
)

// MaxVisualWhyBytes bounds visual_tokens.why.
const MaxVisualWhyBytes = 1024

// whyBareCount is the Why of a bare count read from a record written before the check.
const whyBareCount = "recorded before expected counts were"

// UnmarshalJSON reads the object, or the bare count of records written before it (see VisualTokens).
func (v *VisualTokens) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] != '{' && t[0] != 'n' {
		var n int
		if err := json.Unmarshal(t, &n); err != nil {
			return fmt.Errorf("visual_tokens: %v", err)
		}
		*v = VisualTokens{Seen: &n, How: VisualRuntime, Why: whyBareCount}
		return nil
	}
	type plain VisualTokens // without this method
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("visual_tokens: %v", err)
	}
	*v = VisualTokens(p)
	return nil
}

// Ratio is seen/expected, and whether there is one (both known, expected above 0).
func (v *VisualTokens) Ratio() (float64, bool) {
	if v == nil || v.Expected == nil || v.Seen == nil || *v.Expected <= 0 {
		return 0, false
	}
	return float64(*v.Seen) / float64(*v.Expected), true
}

// Outside reports whether the model counted other visual tokens than the frames fed make: an
// in-process count that differs at all, a server's ratio outside [VisualLow, VisualHigh].
func (v *VisualTokens) Outside() bool {
	if v != nil && v.How == VisualRuntime && v.Expected != nil && v.Seen != nil {
		return *v.Expected != *v.Seen
	}
	r, ok := v.Ratio()
	return ok && (r < VisualLow || r > VisualHigh)
}

// validate says what is wrong with v ("" when nothing is): counts below 0, a how or family no sweep
// writes, a seen count without a way it was found (or one with "unknown").
func (v *VisualTokens) validate() string {
	switch {
	case v == nil:
		return ""
	case (v.Expected != nil && *v.Expected < 0) || (v.Seen != nil && *v.Seen < 0) || v.Overhead < 0:
		return "a negative count"
	case !slices.Contains(VisualHows, v.How):
		return fmt.Sprintf("how %q (want one of %q)", v.How, VisualHows)
	case (v.Seen == nil) != (v.How == VisualUnknown):
		return fmt.Sprintf("how %q with seen %s (a seen count and how it was found go together)", v.How, intOrNull(v.Seen))
	case v.Family != "" && !slices.Contains(VisualFamilies, v.Family):
		return fmt.Sprintf("family %q (want one of %q)", v.Family, VisualFamilies)
	case len(v.Why) > MaxVisualWhyBytes || !utf8.ValidString(v.Why):
		return fmt.Sprintf("why: %d bytes, at most %d of UTF-8", len(v.Why), MaxVisualWhyBytes)
	}
	return ""
}

func intOrNull(p *int) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}
