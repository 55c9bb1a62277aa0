// Package portable gives the forms artifacts meant to be published or moved hold instead of local
// paths: a video relative to a declared root, a model by its file name (its digest beside it), free
// text with absolute paths cut to their file names. Nothing here touches the file system.
package portable

import (
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Rel is p relative to root, slash-separated ("clips/a.mp4", "../videos/a.mp4"), as an items file
// names a video relative to itself; p made absolute, and false, only when no relative path exists
// (another volume).
func Rel(root, p string) (string, bool) {
	ap, err := filepath.Abs(p)
	if err != nil {
		return p, false
	}
	ar, err := filepath.Abs(root)
	if err != nil {
		return ap, false
	}
	rel, err := filepath.Rel(ar, ap)
	if err != nil || filepath.IsAbs(rel) {
		return ap, false
	}
	return filepath.ToSlash(rel), true
}

// Path is p with no local directory: an absolute path becomes its file name; a relative one is
// kept (it names nothing outside what it is relative to).
func Path(p string) string {
	if filepath.IsAbs(p) || path.IsAbs(p) {
		return filepath.Base(p)
	}
	return p
}

// Spec is a runtime spec ("engine:key=value,…") with every value that names a file given by its file
// name: the keys of files (the spec keys whose files were digested: model, mmproj, …) and any
// absolute path. A spec that does not parse has its absolute paths cut as Text does.
func Spec(raw string, files map[string]string) string {
	engine, rest, ok := strings.Cut(raw, ":")
	if !ok || strings.Contains(engine, "/") {
		return Text(raw)
	}
	if strings.TrimSpace(rest) == "" {
		return raw
	}
	kvs := strings.Split(rest, ",")
	for i, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Text(raw)
		}
		if _, file := files[strings.TrimSpace(k)]; (file && strings.TrimSpace(v) != "") || filepath.IsAbs(strings.TrimSpace(v)) {
			kvs[i] = k + "=" + filepath.Base(strings.TrimSpace(v))
		}
	}
	return engine + ":" + strings.Join(kvs, ",")
}

// absPath is an absolute path in free text: a "/" that starts a word (not "//", a URL's authority)
// and what follows up to a space, a quote, a bracket or a comma.
var absPath = regexp.MustCompile(`(^|[\s"'(\[=:])(/[^/\s"'()\[\],;][^\s"'()\[\],;]*)`)

// Text is s with every absolute path in it cut to its file name ("open /home/u/v/a.mp4: …" →
// "open a.mp4: …"), for messages kept in artifacts (a record's error).
func Text(s string) string {
	return absPath.ReplaceAllStringFunc(s, func(m string) string {
		sub := absPath.FindStringSubmatch(m)
		return sub[1] + filepath.Base(strings.TrimRight(sub[2], ".:")) + trailing(sub[2])
	})
}

// trailing is the punctuation a path in a sentence ends with, kept after its file name.
func trailing(p string) string {
	return p[len(strings.TrimRight(p, ".:")):]
}
