// Package layers holds the code to its map: its test reads the package table of docs/architecture.md
// and checks every package's imports against it (see TestImportsFollowTheMap). It has no code of its own.
package layers
