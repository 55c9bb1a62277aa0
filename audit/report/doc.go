// Package report renders an audit.Result as one self-contained HTML file (inline CSS and SVG, no scripts,
// fonts or network fetches) and as Markdown. Both read the same Result that `framesweep audit --json`
// prints, so every number in a report is a rounding of a number in the JSON.
package report
