package decode

import (
	"fmt"
	"strings"
)

// HWAccel names a hardware decoding request.
type HWAccel string

// Hardware decoding requests accepted by Options.HWAccel and `--hwaccel`.
const (
	HWNone  HWAccel = "none"
	HWCUDA  HWAccel = "cuda"
	HWVAAPI HWAccel = "vaapi"
	HWAuto  HWAccel = "auto" // try cuda, then vaapi, then the CPU
)

// ParseHWAccel validates a --hwaccel value ("" means none).
func ParseHWAccel(s string) (HWAccel, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "none", "cpu":
		return HWNone, nil
	case "cuda", "nvdec":
		return HWCUDA, nil
	case "vaapi":
		return HWVAAPI, nil
	case "auto":
		return HWAuto, nil
	}
	return "", fmt.Errorf("%w: hwaccel %q (want none, cuda, vaapi or auto)", ErrBadOption, s)
}

// StreamTraits are the properties of a stream that decide whether a GPU decoder can take it.
type StreamTraits struct {
	Codec    string // FFmpeg codec name: h264, hevc, vp8, vp9, av1, mpeg4, mjpeg, ...
	BitDepth int    // luma bits per sample (8, 10, 12)
	Chroma   string // "420", "422", "444", "400"
}

// HWChoice is the outcome of hardware selection: the device type to try ("" = CPU) and, when the CPU
// is used although hardware was requested, why.
type HWChoice struct {
	Device   HWAccel `json:"device,omitempty"`
	Fallback string  `json:"fallback,omitempty"`
}

// nvdecSupports is the NVDEC capability of the GPUs we target (Ampere and later: A100, H100, H200),
// from NVIDIA's decoder support matrix: AV1 8/10-bit 4:2:0 (Ampere added it), and, like every NVDEC
// generation, no 10-bit or 4:2:2/4:4:4 H.264. It only decides what to try: on an older GPU the device
// or decoder set-up fails and the CPU is used with the reason recorded (bench/gpu/run.sh checks each
// codec on the device itself).
func nvdecSupports(t StreamTraits) (bool, string) {
	switch t.Codec {
	case "h264":
		if t.BitDepth > 8 {
			return false, fmt.Sprintf("NVDEC cannot decode %d-bit H.264", t.BitDepth)
		}
		if t.Chroma != "420" && t.Chroma != "400" {
			return false, "NVDEC cannot decode H.264 " + chromaName(t.Chroma) + " chroma (4:2:0 only)"
		}
		return true, ""
	case "hevc":
		if t.BitDepth > 12 {
			return false, fmt.Sprintf("NVDEC cannot decode %d-bit HEVC", t.BitDepth)
		}
		if t.Chroma == "422" {
			return false, "NVDEC on Hopper cannot decode HEVC 4:2:2"
		}
		return true, ""
	case "vp9":
		if t.BitDepth > 12 || (t.Chroma != "420" && t.Chroma != "400") {
			return false, "NVDEC decodes VP9 4:2:0 up to 12-bit only"
		}
		return true, ""
	case "vp8", "mpeg1video", "mpeg2video", "mpeg4", "vc1", "mjpeg":
		if t.BitDepth > 8 {
			return false, fmt.Sprintf("NVDEC cannot decode %d-bit %s", t.BitDepth, t.Codec)
		}
		return true, ""
	case "av1":
		if t.BitDepth > 10 || (t.Chroma != "420" && t.Chroma != "400") {
			return false, "NVDEC decodes AV1 4:2:0 up to 10-bit only"
		}
		return true, ""
	}
	return false, "NVDEC has no decoder for " + t.Codec
}

// vaapiSupports is a conservative VA-API rule: the common 8/10-bit 4:2:0 profiles.
func vaapiSupports(t StreamTraits) (bool, string) {
	switch t.Codec {
	case "h264", "hevc", "vp8", "vp9", "av1", "mpeg2video", "mjpeg":
		if t.Chroma != "420" && t.Chroma != "400" {
			return false, "VA-API path takes 4:2:0 only"
		}
		if t.BitDepth > 10 || (t.Codec == "h264" && t.BitDepth > 8) {
			return false, fmt.Sprintf("VA-API cannot decode %d-bit %s", t.BitDepth, t.Codec)
		}
		return true, ""
	}
	return false, "VA-API has no decoder for " + t.Codec
}

// SelectHW decides, without touching any device, which hardware decoder (if any) to try for a stream.
// It is pure so the policy is unit-tested; device creation failures are handled later by Open.
func SelectHW(req HWAccel, t StreamTraits) HWChoice {
	switch req {
	case "", HWNone:
		return HWChoice{}
	case HWCUDA:
		if ok, why := nvdecSupports(t); !ok {
			return HWChoice{Fallback: "cuda: " + why}
		}
		return HWChoice{Device: HWCUDA}
	case HWVAAPI:
		if ok, why := vaapiSupports(t); !ok {
			return HWChoice{Fallback: "vaapi: " + why}
		}
		return HWChoice{Device: HWVAAPI}
	case HWAuto:
		if ok, _ := nvdecSupports(t); ok {
			return HWChoice{Device: HWCUDA}
		}
		if ok, _ := vaapiSupports(t); ok {
			return HWChoice{Device: HWVAAPI}
		}
		_, why := nvdecSupports(t)
		return HWChoice{Fallback: "auto: " + why}
	}
	return HWChoice{Fallback: fmt.Sprintf("unknown hwaccel %q", req)}
}

// chromaName turns "444" into "4:4:4".
func chromaName(c string) string {
	if len(c) != 3 {
		return c
	}
	return c[:1] + ":" + c[1:2] + ":" + c[2:]
}
