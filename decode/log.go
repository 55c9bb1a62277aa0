package decode

import (
	"os"

	"github.com/asticode/go-astiav"
)

// SetLogLevel sets FFmpeg's (process-wide) log level: "quiet", "error", "warning", "info", "debug".
// FFmpeg logs go to stderr.
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
	astiav.SetLogLevel(l)
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
