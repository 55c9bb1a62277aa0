// Package layers holds the code to its map: its test reads the floors table and the package table of
// docs/architecture.md and checks every package's imports against both (see TestImportsFollowTheMap):
// a package on no floor or off the package table, an import its row does not allow, an import from a
// higher floor and test support imported by code each fail, naming the package or the pair. It has no
// code of its own.
package layers
