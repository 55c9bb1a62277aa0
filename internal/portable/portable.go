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

// Path is p with no local directory: an absolute path, a file:// URL and a relative path that
// escapes upward ("../../home/u/v.mp4": outside what it is relative to) become their file name; a
// relative path inside its root is kept (it names nothing outside what it is relative to), as are
// other URLs.
func Path(p string) string {
	if rest, ok := fileURL(p); ok {
		return path.Base(strings.TrimRight(rest, "/"))
	}
	if filepath.IsAbs(p) || path.IsAbs(p) {
		return filepath.Base(p)
	}
	if Escapes(p) {
		return path.Base(filepath.ToSlash(p))
	}
	return p
}

// Escapes reports whether the relative path p leads outside the directory it is relative to.
func Escapes(p string) bool {
	c := path.Clean(filepath.ToSlash(p))
	return c == ".." || strings.HasPrefix(c, "../")
}

// fileURL is the path of a file:// URL (any case), false for anything else.
func fileURL(p string) (string, bool) {
	if len(p) < 7 || !strings.EqualFold(p[:7], "file://") {
		return "", false
	}
	rest := p[7:]
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest, true
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

// localRef is a file:// URL or a relative path that climbs out of its root ("../../x") in free text.
var localRef = regexp.MustCompile(`(^|[\s"'(\[=])((?i:file://)[^\s"'()\[\],;]*|(?:\.\./)+[^\s"'()\[\],;]*)`)

// Text is s with every absolute path, file:// URL and upward-escaping relative path in it cut to its
// file name ("open /home/u/v/a.mp4: …" → "open a.mp4: …"), for messages kept in artifacts (a record's
// error).
func Text(s string) string {
	s = localRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := localRef.FindStringSubmatch(m)
		p := strings.TrimRight(sub[2], ".:")
		return sub[1] + Path(p) + trailing(sub[2])
	})
	return absPath.ReplaceAllStringFunc(s, func(m string) string {
		sub := absPath.FindStringSubmatch(m)
		return sub[1] + filepath.Base(strings.TrimRight(sub[2], ".:")) + trailing(sub[2])
	})
}

// trailing is the punctuation a path in a sentence ends with, kept after its file name.
func trailing(p string) string {
	return p[len(strings.TrimRight(p, ".:")):]
}
