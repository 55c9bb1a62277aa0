package runs

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/framesweep/framesweep/internal/bucket"
	"github.com/framesweep/framesweep/items"
)

// loadItems reads the sweep's items file, to check each record's item and count the pairs against:
// MergeOptions.Items, else the path run.json names. The file must be the sweep's (run.json's
// canonical digest). One given with --items that is not is an error; run.json's path that is gone
// or changed is a warning, and the merge then claims no completeness.
func (m *merger) loadItems() error {
	want := m.infos[0].Items
	path, given := m.o.Items, m.o.Items != ""
	if !given {
		path = want.Path
	}
	if path == "" {
		m.warnItems("run.json names no items file")
		return nil
	}
	f, err := items.Read(path)
	switch {
	case err != nil && given:
		return fmt.Errorf("--items: %w", err)
	case err != nil:
		m.warnItems(fmt.Sprintf("the items file run.json names cannot be read (%v)", err))
		return nil
	case f.SHA256 != want.SHA256 && given:
		return fmt.Errorf("--items %s is not the items file of this sweep (sha256 %.12s…, run.json has %.12s… of %d items)", path, f.SHA256, want.SHA256, want.Count)
	case f.SHA256 != want.SHA256:
		m.warnItems(fmt.Sprintf("%s changed since the sweep (sha256 %.12s…, run.json has %.12s…)", path, f.SHA256, want.SHA256))
		return nil
	}
	m.items = make(map[string]int, len(f.Items))
	for i, it := range f.Items {
		m.items[it.ItemID] = i
		m.order = append(m.order, it.ItemID)
	}
	m.sum.Items = path
	return nil
}

func (m *merger) warnItems(why string) {
	m.sum.Warnings = append(m.sum.Warnings, why+": pairs are not counted against the items (give --items ITEMS.jsonl)")
}

// outsideInputs refuses an output that is an input or lies inside one (a directory below a RUN
// directory, a key prefix below a RUN's prefix): what the merge writes must never be read as part of
// what it merges.
func outsideInputs(out string, inputs []string) error {
	o, err := locationKey(out)
	if err != nil {
		return err
	}
	for _, in := range inputs {
		i, err := locationKey(in)
		if err != nil {
			return err
		}
		if o == i || strings.HasPrefix(o, i+"/") {
			return fmt.Errorf("--out %s is inside the input RUN %s: give an --out outside every input", out, in)
		}
	}
	return nil
}

// locationKey is a RUN location compared by place: a blob URL without its query (scheme://bucket/
// prefix, no trailing slash), or a directory's absolute path with its existing part's symbolic links
// resolved.
func locationKey(loc string) (string, error) {
	if bucket.IsURL(loc) {
		u, err := url.Parse(loc)
		if err != nil {
			return "", fmt.Errorf("%s: %v", loc, err)
		}
		if p := u.Query().Get("prefix"); p != "" {
			u.Path = "/" + p
		}
		u.RawQuery, u.Fragment = "", ""
		return strings.TrimRight(u.String(), "/"), nil
	}
	abs, err := filepath.Abs(loc)
	if err != nil {
		return "", err
	}
	// Resolve the longest existing prefix: --out may not exist yet.
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest), nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if filepath.Dir(p) == p {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}
