//go:build race

package native

// raceEnabled trims the slowest pure-Go reference runs under -race (instrumented Go is ~10× slower);
// the vector levels are still checked on every case.
const raceEnabled = true
