package decode

import (
	"os"

	"github.com/asticode/go-astiav"
	"github.com/framesweep/framesweep/native/ffmpeg"
)

// SetLogLevel sets the (process-wide) level of FFmpeg's messages printed to stderr: "quiet", "error",
// "warning", "info", "debug". FFmpeg itself keeps logging errors to decode's hook, which counts
// decoder errors for damage detection (Stats.Damaged); only the printing follows the level.
func SetLogLevel(level string) {
	l := astiav.LogLevelError
	switch level {
	case "quiet":
		l = astiav.LogLevelQuiet
	case "warning":
		l = astiav.LogLevelWarning
	case "info":
		l = astiav.LogLevelInfo
	case "debug":
		l = astiav.LogLevelDebug
	}
	// The hook counts decoder errors whatever the printed level (damage detection, read.go).
	ffmpeg.SetLogLevel(int(l))
}

// CLILogLevel is the FFmpeg log level for CLI commands: "quiet", so a handled error stays the one line
// that names the file and the cause (FFmpeg's messages are folded into our errors' causes); set
// FRAMESWEEP_FFMPEG_LOG=error|warning|info|debug to see FFmpeg's own messages.
func CLILogLevel() string {
	if l := os.Getenv("FRAMESWEEP_FFMPEG_LOG"); l != "" {
		return l
	}
	return "quiet"
}
