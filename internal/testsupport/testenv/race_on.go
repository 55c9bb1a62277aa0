//go:build race

package testenv

// raceEnabled: this test binary is race-built, and so is the CLI it builds for itself.
const raceEnabled = true
