// Package apilist holds the module's exported API to a checked-in list, in the manner of Go's own
// api/*.txt: api/framesweep.txt names every exported identifier of every importable package (not
// internal/, not package main), one a line, and its test (TestExportedNamesAreListed) fails on an
// export the list does not name and on a listed name that is gone, naming it. An export is a promise
// to code outside the module; the list makes each new one a decision seen in review. After a change
// meant to add or remove exports:
//
//	go test ./internal/apilist -run TestExportedNamesAreListed -update
//
// rewrites the list; review its diff with the change. It has no code of its own.
package apilist
