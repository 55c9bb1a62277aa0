// Package items is what a sweep asks: the canonical items file (ITEMS.jsonl: one question per line,
// with its video, options and answer; README "Items file") and the importers that write one from a
// benchmark's release (Video-MME's parquet or JSON, an MLVU task file, a CSV). It is pure Go and knows
// nothing of decoding or models: the sweep reads a File and groups its items by video.
//
// Read/Parse validate every line (file:line and the cause in every error) and digest the items'
// canonical encoding (File.SHA256), so reformatting a file does not make it another items file.
// Import converts a release and lists the videos it cannot find; Write writes canonical items
// atomically.
//
// Build tags: -tags noparquet leaves out the Parquet reader (github.com/parquet-go/parquet-go); a
// Parquet release is then refused with a one-line error naming the file and the tag (its JSON form
// still imports).
package items
