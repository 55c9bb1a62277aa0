package items

import "github.com/framesweep/framesweep/internal/portable"

// RelativeTo names every item's video relative to dir (slash-separated), as an items file in dir
// names them so that the file and its videos move together: `items import` writes ITEMS.jsonl this
// way (Read resolves such paths against the file's directory). A video with no relative path (another
// volume) stays absolute.
func RelativeTo(dir string, its []Item) {
	for i := range its {
		if rel, ok := portable.Rel(dir, its[i].Video); ok {
			its[i].Video = rel
		}
	}
}
