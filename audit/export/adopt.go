package export

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// OptionsDifferError: two exports given to one audit were audited with different options, so no
// one set of options gives them again; the options must be given explicitly.
type OptionsDifferError struct{ A, B string }

func (e *OptionsDifferError) Error() string {
	return fmt.Sprintf("exports %s and %s were audited with different options; give the options explicitly", e.A, e.B)
}

// Recorded finds the exports among an audit's positionals (each verified against its manifest:
// LoadManifest) and returns the options they were audited with and the manifest that says so; nil
// when no positional is an export. Exports that disagree are an *OptionsDifferError.
func Recorded(pos []string) (*AuditOptions, string, error) {
	var m *Manifest
	from := ""
	for _, p := range pos {
		got, ok, err := LoadManifest(p)
		if err != nil {
			return nil, "", err
		}
		if !ok {
			continue
		}
		if m != nil && !reflect.DeepEqual(m.Audit, got.Audit) {
			return nil, "", &OptionsDifferError{A: from, B: p}
		}
		m, from = got, p
	}
	if m == nil {
		return nil, "", nil
	}
	return &m.Audit, filepath.Join(from, ManifestName), nil
}

// Flags are the `framesweep audit` flags that give these options again, by flag name; a repeatable
// flag (ceiling) has one value per use. The names are the current spellings (README "Commands"),
// never the old ones kept as deprecated aliases. Options at their zero value (no reference, no folds, any
// policy or size) have no flag.
func (a AuditOptions) Flags() map[string][]string {
	vals := map[string][]string{
		"bootstrap-seed": {strconv.FormatUint(a.Seed, 10)}, "resamples": {strconv.Itoa(a.Resamples)},
		"epsilon": {strconv.FormatFloat(a.Epsilon, 'g', -1, 64)}, "default-policy": {a.DefaultPolicy},
	}
	if len(a.Budgets) > 0 {
		var b []string
		for _, n := range a.Budgets {
			b = append(b, strconv.Itoa(n))
		}
		vals["cascade"] = []string{strings.Join(b, ",")}
	}
	for k, v := range map[string]int{"reference": a.Reference, "folds": a.Folds} {
		if v != 0 {
			vals[k] = []string{strconv.Itoa(v)}
		}
	}
	if a.Policy != "" {
		vals["cascade-policy"] = []string{a.Policy}
	}
	if a.Width > 0 {
		vals["cascade-size"] = []string{fmt.Sprintf("%dx%d", a.Width, a.Height)}
	}
	if a.Cluster != "" {
		vals["cluster"] = []string{a.Cluster}
	}
	if a.AllowDrop {
		vals["allow-drop"] = []string{"true"}
	}
	for mdl, c := range a.Ceilings {
		vals["ceiling"] = append(vals["ceiling"], fmt.Sprintf("%s=%d", mdl, c))
	}
	return vals
}
