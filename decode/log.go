package decode

import "github.com/asticode/go-astiav"

// SetLogLevel sets FFmpeg's (process-wide) log level: "quiet", "error", "warning", "info", "debug".
// FFmpeg logs go to stderr; the CLI keeps them at "error" so its stderr stays readable.
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
