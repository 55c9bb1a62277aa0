package bench

import (
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/klauspost/cpuid/v2"

	"github.com/framesweep/framesweep/internal/version"
)

// Env identifies where and with what a benchmark ran; every row carries it.
type Env struct {
	Commit    string `json:"commit"`
	CPU       string `json:"cpu"`
	CPUs      int    `json:"cpus"` // logical CPUs the process may use (GOMAXPROCS)
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	Go        string `json:"go"`
	FFmpeg    string `json:"ffmpeg"`
	GoAstiav  string `json:"go_astiav"`
	OpenCV    string `json:"opencv"`
	Engine    string `json:"engine"`
	FFmpegCLI string `json:"ffmpeg_cli"` // `ffmpeg -version` first line (the baseline's version)
}

// CurrentEnv describes this process and machine.
func CurrentEnv() Env {
	return Env{
		Commit:    commit(),
		CPU:       strings.TrimSpace(cpuid.CPU.BrandName),
		CPUs:      runtime.GOMAXPROCS(0),
		GOOS:      runtime.GOOS,
		GOARCH:    runtime.GOARCH,
		Go:        runtime.Version(),
		FFmpeg:    version.FFmpeg,
		GoAstiav:  version.GoAstiav,
		OpenCV:    version.OpenCV,
		Engine:    version.Engine,
		FFmpegCLI: ffmpegCLIVersion(),
	}
}

// commit is the VCS revision stamped into the binary, else `git rev-parse` in the working directory
// (test binaries are not stamped), with "-dirty" for uncommitted changes.
func commit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		rev += "-dirty"
	}
	return rev
}

func ffmpegCLIVersion() string {
	out, err := exec.Command("ffmpeg", "-hide_banner", "-version").Output()
	if err != nil {
		return "unavailable"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	line, _, _ = strings.Cut(line, " Copyright")
	return strings.TrimSpace(line)
}
