package ingest

import (
	"sort"
	"strconv"
	"strings"
	"unicode"
)

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// keyList describes a sample's keys for an error: dict-valued keys show their own keys, e.g.
// "doc_id, my_metric{gold, pred}, target". A key that is not plain printable text is quoted, so a line
// break in a key cannot split the one-line error.
func keyList(s map[string]any, skip map[string]bool) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for i, k := range keys {
		shown := showKey(k)
		if m, ok := s[k].(map[string]any); ok {
			sub := make([]string, 0, len(m))
			for kk := range m {
				sub = append(sub, kk)
			}
			sort.Strings(sub)
			if len(sub) > 12 {
				sub = append(sub[:12], "…")
			}
			for j := range sub {
				if sub[j] != "…" {
					sub[j] = showKey(sub[j])
				}
			}
			shown += "{" + strings.Join(sub, ", ") + "}"
		}
		keys[i] = shown
	}
	return strings.Join(keys, ", ")
}

func showKey(k string) string {
	for _, r := range k {
		if !unicode.IsPrint(r) || r == ',' || r == '{' || r == '}' {
			return strconv.Quote(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

// pathValue follows a dotted path ("my_metric.score") through nested objects.
func pathValue(s map[string]any, path string) (any, bool) {
	var cur any = s
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}
