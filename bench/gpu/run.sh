#!/usr/bin/env bash
# bench/gpu/run.sh: check and time `--hwaccel cuda` decoding on an NVIDIA GPU host (driver installed).
#
#   bash bench/gpu/run.sh            # from the repository root; prints a summary, exit 0 when every check passes
#
# 1. Fails fast (exit 3) when no NVIDIA GPU/driver is present: no GPU exists on the development machines.
# 2. Builds framesweep, generates short clips with the ffmpeg CLI (H.264 8-bit, HEVC 8/10-bit, VP9 8-bit,
#    AV1 8-bit, H.264 10-bit) and runs `framesweep bench decode --hwaccel cuda` on each:
#    - GPU-decodable codecs must decode on the device (hw-used=1), serve as many frames as the CPU, and
#      match the CPU frames with PSNR >= $PSNR_MIN dB (NVDEC output may differ slightly after conversion);
#    - AV1 and 10-bit H.264 (not decodable by NVDEC on Hopper) must fall back to the CPU with a recorded
#      reason and the same frame count.
# 3. Times cuda vs CPU decoding of the 60 s 1080p30 H.264 benchmark clip.
# The whole run is bounded to 10 minutes. Knobs: PSNR_MIN (default 35), FRAMESWEEP_BENCH_CACHE, OUT (work dir).
set -euo pipefail

LIMIT_S=600
if [[ -z "${FRAMESWEEP_GPU_TIMED:-}" ]]; then
	export FRAMESWEEP_GPU_TIMED=1
	# Re-run under a hard wall-clock limit; the process group dies with it.
	exec timeout --kill-after=10 "$LIMIT_S" bash "$0" "$@"
fi

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PSNR_MIN="${PSNR_MIN:-35}"
OUT="${OUT:-$(mktemp -d /tmp/framesweep-gpu.XXXXXX)}"
mkdir -p "$OUT"
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY=python3

die() { echo "bench/gpu: $1" >&2; exit "${2:-1}"; }

# --- 1. a GPU and its driver --------------------------------------------------------------------------
command -v nvidia-smi >/dev/null 2>&1 || die "no NVIDIA driver on this host (nvidia-smi not found); run this on a GPU host" 3
nvidia-smi -L >/dev/null 2>&1 || die "nvidia-smi cannot talk to a GPU: $(nvidia-smi -L 2>&1 | head -n1)" 3
if ! { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libcuda\.so\.1'; then
	# Not fatal: it may sit in LD_LIBRARY_PATH. If FFmpeg cannot load it, every GPU check below fails
	# with decode's fallback reason in the summary.
	echo "bench/gpu: warning: libcuda.so.1 is not in the loader cache" >&2
fi
ffmpeg -hide_banner -hwaccels 2>/dev/null | grep -qx 'cuda' || die "this FFmpeg build lists no cuda hwaccel (ffmpeg -hwaccels)" 3
GPU="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n1)"
echo "bench/gpu: GPU: $GPU"

# --- 2. build ------------------------------------------------------------------------------------------
# shellcheck disable=SC1091
source scripts/env.sh
BIN="$OUT/framesweep"
echo "bench/gpu: building $BIN"
timeout 300 go build -o "$BIN" ./cmd/framesweep || die "go build failed"

# --- 3. clips and correctness checks -------------------------------------------------------------------
# name | expectation (gpu|fallback) | ffmpeg encoder arguments
CLIPS=(
	"h264-8bit|gpu|-c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p"
	"hevc-8bit|gpu|-c:v libx265 -preset veryfast -x265-params log-level=error:keyint=60 -pix_fmt yuv420p"
	"hevc-10bit|gpu|-c:v libx265 -preset veryfast -x265-params log-level=error:keyint=60 -pix_fmt yuv420p10le"
	"vp9-8bit|gpu|-c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 2M -g 60 -pix_fmt yuv420p"
	"av1-8bit|fallback|-c:v libaom-av1 -usage realtime -cpu-used 8 -b:v 2M -g 60 -pix_fmt yuv420p"
	"h264-10bit|fallback|-c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p10le"
)
declare -a SUMMARY=()
FAIL=0
for spec in "${CLIPS[@]}"; do
	IFS='|' read -r name expect enc <<<"$spec"
	clip="$OUT/$name.mkv"
	# 4 s of 1280x720 keeps libaom fast enough; the pattern moves, so frames differ.
	# shellcheck disable=SC2086
	timeout 120 ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i testsrc2=size=1280x720:rate=30 -t 4 $enc "$clip" \
		|| { SUMMARY+=("$name: FAIL (ffmpeg could not encode the clip)"); FAIL=1; continue; }
	json="$OUT/$name.json"
	if ! timeout 120 "$BIN" bench decode --video "$clip" --threads 0 --hwaccel cuda --compare 16 --json --quiet >"$json" 2>"$OUT/$name.err"; then
		SUMMARY+=("$name: FAIL (framesweep bench decode: $(tail -n1 "$OUT/$name.err"))")
		FAIL=1
		continue
	fi
	verdict="$("$PY" - "$json" "$expect" "$PSNR_MIN" <<'PYEOF'
import json, sys
rows = json.load(open(sys.argv[1]))
expect, psnr_min = sys.argv[2], float(sys.argv[3])
chk = next(r for r in rows if "/check=hwaccel-vs-cpu/" in r["name"])
m = {x["name"]: x["value"] for x in chk.get("metrics", [])}
hwrow = next(r for r in rows if r["name"].endswith("/variant=decode/hwaccel=cuda"))
cpurow = next(r for r in rows if r["name"].endswith("/variant=decode/hwaccel=none"))
speed = cpurow["seconds"] / hwrow["seconds"] if hwrow["seconds"] else 0
note = chk.get("note", "")
problems = []
if chk.get("failure"):
    problems.append(chk["failure"])
if m.get("frames-hw") != m.get("frames-cpu"):
    problems.append("frame count cuda %s != cpu %s" % (m.get("frames-hw"), m.get("frames-cpu")))
if expect == "gpu":
    if m.get("hw-used") != 1:
        problems.append("did not decode on the GPU (%s)" % note)
    if m.get("psnr-min-dB", 0) < psnr_min:
        problems.append("PSNR min %.2f dB < %s" % (m.get("psnr-min-dB", 0), psnr_min))
else:
    if m.get("hw-used") != 0 or "fallback:" not in note:
        problems.append("expected a CPU fallback with a reason, got: %s" % note)
status = "FAIL" if problems else "ok"
print("%s frames=%d psnr_min=%.2f psnr_mean=%.2f cuda/cpu speed=%.2fx [%s]%s" % (
    status, m.get("frames-cpu", 0), m.get("psnr-min-dB", 0), m.get("psnr-mean-dB", 0), speed, note,
    (": " + "; ".join(problems)) if problems else ""))
PYEOF
)" || verdict="FAIL (could not read $json)"
	SUMMARY+=("$name (expect $expect): $verdict")
	[[ "$verdict" == ok* ]] || FAIL=1
done

# --- 4. timing on the 60 s 1080p30 benchmark clip ------------------------------------------------------
echo "bench/gpu: timing cuda vs CPU on the 60 s 1080p30 H.264 clip (generated once into the bench cache)"
TIMING="$OUT/timing.txt"
if timeout 300 "$BIN" bench decode --threads 0 --hwaccel cuda --compare 32 --format benchstat --quiet >"$TIMING" 2>"$OUT/timing.err"; then
	SUMMARY+=("timing (60 s 1080p30 H.264, cuda vs CPU): $(grep -E '^Benchmark.*variant=decode/hwaccel=cuda' "$TIMING" | tr '\t' ' ' | sed 's/  */ /g')")
else
	SUMMARY+=("timing: FAIL ($(tail -n1 "$OUT/timing.err"))")
	FAIL=1
fi

echo
echo "bench/gpu summary ($GPU; PSNR threshold $PSNR_MIN dB; work dir $OUT)"
for line in "${SUMMARY[@]}"; do echo "  $line"; done
[[ -s "$TIMING" ]] && { echo; cat "$TIMING"; }
if [[ $FAIL -ne 0 ]]; then
	echo "bench/gpu: FAILED" >&2
	exit 1
fi
echo "bench/gpu: all checks passed"
