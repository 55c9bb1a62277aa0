package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/framesweep/framesweep/extract"
	"github.com/framesweep/framesweep/llm/llamacpp"
)

// nvdecClips are 2-frame 256×256 clips of each codec NVDEC may take, made with the ffmpeg CLI from
// its testsrc2 source (libx264, libx265, libvpx-vp9, libaom-av1; yuv420p and yuv420p10le): 256 is
// above every codec's NVDEC minimum (HEVC 144, VP9 and AV1 128).
//
//go:embed nvdec/*.mkv
var nvdecClips embed.FS

// nvdecOrder is the order of the NVDEC lines (the clips' names).
var nvdecOrder = []string{"h264-8bit", "h264-10bit", "hevc-8bit", "hevc-10bit", "vp9-8bit", "vp9-10bit", "av1-8bit", "av1-10bit"}

// doctorPieces are what `framesweep doctor` checks, in its order.
var doctorPieces = []string{"driver", "cuda", "llama", "nvdec", "devices"}

// doctorLine is one line of the preflight: a piece, its state and what was found or is missing.
type doctorLine struct {
	Piece string `json:"piece"`
	Name  string `json:"name"`
	// ok; missing; timeout; cpu (kept on the CPU by framesweep's policy) and absent (the other CUDA
	// major's runtime is there) are not failures.
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// runDoctor: framesweep doctor [--check LIST] [--timeout D] [--json]
func runDoctor(args []string, stdout, stderr io.Writer) int {
	const name = "doctor"
	fs := newFlags(name, stderr)
	check := fs.String("check", strings.Join(doctorPieces, ","), "what to check: "+strings.Join(doctorPieces, ","))
	timeout := fs.Duration("timeout", 5*time.Second, "time box of each probe (> 0, at most 60 s)")
	asJSON := fs.Bool("json", false, "one JSON document instead of text lines")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: framesweep doctor [--check driver,cuda,llama,nvdec,devices] [--timeout 5s] [--json]")
		fmt.Fprintln(stderr, "\nThe GPU preflight: one line per piece — the NVIDIA driver (libcuda.so.1, its CUDA version), the CUDA\n"+
			"runtime and cuBLAS of each major and where they resolve, the llama.cpp CUDA build that would load,\n"+
			"NVDEC through FFmpeg's cuda hwaccel per codec and bit depth, the devices and their memory. Exit 0 only\n"+
			"when everything checked is there; each probe is time-boxed.")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagParseStatus(err)
	}
	if len(pos) != 0 {
		return usageErr(stderr, name, "unexpected arguments %q", pos)
	}
	want := map[string]bool{}
	for _, p := range strings.Split(*check, ",") {
		if !slices.Contains(doctorPieces, p) {
			return usageErr(stderr, name, "--check %q: want a comma list of %s", p, strings.Join(doctorPieces, ","))
		}
		want[p] = true
	}
	d := &doctor{timeout: *timeout, deadline: time.Now().Add(30 * time.Second)}
	var lines []doctorLine
	for _, p := range doctorPieces {
		if want[p] {
			lines = append(lines, d.piece(p)...)
		}
	}
	missing := []string{}
	for _, l := range lines {
		if !*asJSON {
			fmt.Fprintf(stdout, "%-8s %-14s %-7s %s\n", l.Piece, l.Name, l.Status, l.Detail)
		}
		if l.Status != "ok" && l.Status != "cpu" && l.Status != "absent" && !slices.Contains(missing, l.Piece) {
			missing = append(missing, l.Piece)
		}
	}
	if *asJSON {
		if err := writeJSON(stdout, struct {
			Lines   []doctorLine `json:"lines"`
			Missing []string     `json:"missing"`
		}{lines, missing}); err != nil {
			return failErr(stderr, name, err)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(stderr, "framesweep doctor: missing or failing: %s (docs/runtimes.md \"GPU\")\n", strings.Join(missing, ", "))
		return exitError
	}
	return exitOK
}

// doctor runs the probes, each in a time box, all within one deadline.
type doctor struct {
	timeout  time.Duration
	deadline time.Time
	driver   string // libcuda.so.1's path, once found
	version  int    // its CUDA version
}

// boxed runs f in a time box: a probe stuck in a driver call is abandoned (the process exits when
// the doctor is done), reported as a timeout.
func (d *doctor) boxed(f func() []doctorLine, piece, name string) []doctorLine {
	left := time.Until(d.deadline)
	if left <= 0 {
		return []doctorLine{{piece, name, "timeout", "not run: the doctor's 30 s are spent"}}
	}
	ch := make(chan []doctorLine, 1)
	go func() { ch <- f() }()
	select {
	case l := <-ch:
		return l
	case <-time.After(min(d.timeout, left)):
		return []doctorLine{{piece, name, "timeout", fmt.Sprintf("no answer within %s", min(d.timeout, left))}}
	}
}

func (d *doctor) piece(p string) []doctorLine {
	switch p {
	case "driver":
		return d.boxed(d.probeDriver, p, "libcuda.so.1")
	case "cuda":
		// One major's runtime is enough: the other's line is then "absent", not a failure.
		var out []doctorLine
		have := ""
		for _, m := range llamacpp.CUDAMajors {
			l := d.boxed(func() []doctorLine { return cudaRuntimeLine(m) }, p, fmt.Sprintf("runtime %d", m))
			if l[0].Status == "ok" && have == "" {
				have = l[0].Name
			}
			out = append(out, l...)
		}
		for i := range out {
			if have != "" && out[i].Status == "missing" {
				out[i].Status = "absent"
				out[i].Detail += " (not needed: " + have + " is there)"
			}
		}
		return out
	case "llama":
		return d.boxed(d.probeLlama, p, "cuda build")
	case "nvdec":
		return d.probeNVDEC()
	}
	return d.boxed(d.probeDevices, p, "cuInit")
}

// driverHint names what provides libcuda.so.1.
const driverHint = "the NVIDIA driver provides it (Debian: nvidia-driver and libcuda1 from non-free; or NVIDIA's installer), or point LD_LIBRARY_PATH at its folder"

func (d *doctor) findDriver() string {
	if d.driver == "" {
		d.driver = llamacpp.ResolveCUDA(0).Driver
	}
	return d.driver
}

func (d *doctor) probeDriver() []doctorLine {
	p := d.findDriver()
	if p == "" {
		return []doctorLine{{"driver", "libcuda.so.1", "missing", "not found: " + driverHint}}
	}
	v, err := llamacpp.DriverVersion(p)
	if err != nil {
		return []doctorLine{{"driver", "libcuda.so.1", "missing", err.Error()}}
	}
	d.version = v
	detail := fmt.Sprintf("%s, CUDA %d.%d", p, v/1000, v%1000/10)
	if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
		if f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0]); len(f) > 0 {
			for i, w := range f {
				if w == "Module" && i+1 < len(f) {
					detail += ", kernel module " + f[i+1]
				}
			}
		}
	}
	return []doctorLine{{"driver", "libcuda.so.1", "ok", detail}}
}

// cudaRuntimeHint names the packages of a CUDA major's runtime and cuBLAS.
func cudaRuntimeHint(m int) string {
	pip := fmt.Sprintf("nvidia-cuda-runtime-cu%d nvidia-cublas-cu%d", m, m)
	if m >= 13 {
		pip = fmt.Sprintf("nvidia-cuda-runtime nvidia-cublas (%d.x)", m)
	}
	return fmt.Sprintf("install NVIDIA's cuda-cudart-%d-x and libcublas-%d-x (CUDA apt repository), or pip %s and set %s to that environment",
		m, m, pip, llamacpp.EnvCUDAPython)
}

func cudaRuntimeLine(m int) []doctorLine {
	r := llamacpp.FindCUDARuntime(m)
	name := fmt.Sprintf("runtime %d", m)
	if len(r.Missing) > 0 {
		return []doctorLine{{"cuda", name, "missing", strings.Join(r.Missing, ", ") + " not found: " + cudaRuntimeHint(m)}}
	}
	var at []string
	for _, n := range []string{fmt.Sprintf("libcudart.so.%d", m), fmt.Sprintf("libcublas.so.%d", m)} {
		at = append(at, n+" at "+r.Found[n])
	}
	return []doctorLine{{"cuda", name, "ok", strings.Join(at, ", ")}}
}

func (d *doctor) probeLlama() []doctorLine {
	c := llamacpp.ResolveCUDA(d.version)
	if b := c.Chosen(); b != nil {
		return []doctorLine{{"llama", "cuda build", "ok", c.String()}}
	}
	detail := strings.TrimPrefix(c.String(), "none: ")
	for _, b := range c.Builds {
		if len(b.Missing) > 0 {
			detail += "; " + cudaRuntimeHint(b.Major)
			break
		}
	}
	return []doctorLine{{"llama", "cuda build", "missing", detail}}
}

func (d *doctor) probeDevices() []doctorLine {
	p := d.findDriver()
	if p == "" {
		return []doctorLine{{"devices", "cuInit", "missing", "no driver: libcuda.so.1 not found"}}
	}
	gpus, err := llamacpp.Devices(p)
	if err != nil {
		return []doctorLine{{"devices", "cuInit", "missing", err.Error()}}
	}
	if len(gpus) == 0 {
		return []doctorLine{{"devices", "cuInit", "missing", "the driver lists no CUDA device"}}
	}
	var out []doctorLine
	for i, g := range gpus {
		out = append(out, doctorLine{"devices", fmt.Sprintf("cuda%d", i), "ok", fmt.Sprintf("%s, %.1f GiB", g.Name, float64(g.Bytes)/(1<<30))})
	}
	return out
}

// probeNVDEC decodes each clip with --hwaccel cuda: ok when its frames came from the device; "cpu"
// when framesweep's policy keeps that stream on the CPU (extract.ProbeNVDEC); missing otherwise, with
// FFmpeg's reason.
func (d *doctor) probeNVDEC() []doctorLine {
	dir, err := os.MkdirTemp("", "framesweep-doctor-")
	if err != nil {
		return []doctorLine{{"nvdec", "clips", "missing", err.Error()}}
	}
	defer os.RemoveAll(dir)
	var out []doctorLine
	for _, clip := range nvdecOrder {
		b, err := nvdecClips.ReadFile("nvdec/" + clip + ".mkv")
		p := filepath.Join(dir, clip+".mkv")
		if err == nil {
			err = os.WriteFile(p, b, 0o600)
		}
		if err != nil {
			out = append(out, doctorLine{"nvdec", clip, "missing", err.Error()})
			continue
		}
		out = append(out, d.boxed(func() []doctorLine { return nvdecLine(clip, p) }, "nvdec", clip)...)
	}
	return out
}

func nvdecLine(clip, path string) []doctorLine {
	p := extract.ProbeNVDEC(context.Background(), path)
	return []doctorLine{{"nvdec", clip, p.Status, p.Detail}}
}
