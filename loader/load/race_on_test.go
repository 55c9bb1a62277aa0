//go:build race

package load_test

// raceEnabled trims the oracle tests to the repository's sample videos under -race: instrumented Go
// decodes and resizes ~10× slower, and Load runs in one goroutine (the race detector has little to
// find there); the full set runs without -race.
const raceEnabled = true
