#!/usr/bin/env bash
# bench/gpu/run.sh: check and time `--hwaccel cuda` decoding against the CPU path on an NVIDIA GPU host.
#
#   bash bench/gpu/run.sh              # repository root, a host with the NVIDIA driver; exit 0 when every check passes
#   bash bench/gpu/run.sh --self-test  # no GPU needed: tiny clips, every step, the decisions on synthetic cases
#
# 1. No GPU/driver: exit 3 at once (not in --self-test).
# 2. Builds framesweep (or uses $FRAMESWEEP_BIN).
# 3. Per codec (H.264 8/10-bit, HEVC 8/10-bit, VP9 8-bit, AV1 8-bit; short 1280x720 clips): the
#    expectation comes from the device, by a trial decode with the ffmpeg CLI that must keep the frames
#    on the GPU (-hwaccel cuda -hwaccel_output_format cuda, then hwdownload: a software fallback makes
#    it fail). Then `framesweep bench decode --hwaccel cuda --compare 16` decodes on the device and on
#    the CPU. A check FAILS only when the frames differ from the CPU path: another frame count, or (when
#    framesweep decoded on the GPU) PSNR < $PSNR_MIN dB. Where framesweep used the CPU although the
#    device decodes the stream (or the reverse) the line says WARN, with both facts and the reason.
#    Nothing is assumed per GPU generation: NVDEC decodes AV1 on Ampere and later (A100, H100, H200).
# 4. The 60 s 1080p30 H.264 clip: cuda vs CPU decode (bench decode), 1/4/16 parallel streams
#    (`framesweep frames --hwaccel cuda|none` decoding every frame), decoder creation cost (first-frame
#    latency cuda vs CPU), and `framesweep bench peers` (framesweep extract vs PyAV/OpenCV/ffmpeg: the
#    CPU path, extract has no --hwaccel) plus the ffmpeg CLI's -hwaccel cuda bare decode.
# 5. In process: the tiny Qwen2.5-VL model (`framesweep testmodel --arch qwen25vl`) asked one question
#    about 8 frames with llama.cpp on CUDA (device=cuda0) and on the CPU: the same choice, probabilities
#    within $LLAMA_TOL (0.02), tokens/s of each. Needs `scripts/deps.sh cuda` (llama.cpp's CUDA backend)
#    and the host's CUDA 13 runtime; without them the step FAILs with the error that names what is missing.
#    In --self-test: the CPU side twice, and the refusal of device=cuda0 when no CUDA backend is installed.
# All of it is bounded to 10 minutes. Knobs: PSNR_MIN (35), STREAMS ("1 4 16"), PEERS (1; 0 skips the
# peers step), FRAMESWEEP_BIN, FRAMESWEEP_BENCH_CACHE, OUT (work dir), PYTHON (/usr/bin/python3).
set -euo pipefail

SELFTEST=0
[[ "${1:-}" == "--self-test" ]] && SELFTEST=1
[[ $# -le 1 && ( $# -eq 0 || $SELFTEST -eq 1 ) ]] || { echo "usage: bash bench/gpu/run.sh [--self-test]" >&2; exit 2; }

LIMIT_S=600
if [[ -z "${FRAMESWEEP_GPU_TIMED:-}" ]]; then
	export FRAMESWEEP_GPU_TIMED=1
	# Re-run under a hard wall-clock limit; the process group dies with it.
	exec timeout --kill-after=10 "$LIMIT_S" bash "$0" "$@"
fi

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
HERE=bench/gpu
PSNR_MIN="${PSNR_MIN:-35}"
LLAMA_TOL="${LLAMA_TOL:-0.02}"
PEERS="${PEERS:-1}"
OUT="${OUT:-$(mktemp -d /tmp/framesweep-gpu.XXXXXX)}"
mkdir -p "$OUT"
PY="${PYTHON:-/usr/bin/python3}"
[[ -x "$PY" ]] || PY=python3

die() { echo "bench/gpu: $1" >&2; exit "${2:-1}"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -a SUMMARY=()
FAIL=0
WARN=0
note() { SUMMARY+=("$1"); echo "bench/gpu: $1"; }

# --- 1. a GPU and its driver --------------------------------------------------------------------------
if [[ $SELFTEST -eq 1 ]]; then
	GPU="none (self-test)"
	"$PY" "$HERE/verdict.py" self-test || die "verdict.py self-test failed"
	note "verdict decisions: self-test passed"
else
	command -v nvidia-smi >/dev/null 2>&1 || die "no NVIDIA driver on this host (nvidia-smi not found); run this on a GPU host" 3
	nvidia-smi -L >/dev/null 2>&1 || die "nvidia-smi cannot talk to a GPU: $(nvidia-smi -L 2>&1 | head -n1)" 3
	if ! { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -q 'libcuda\.so\.1'; then
		# Not fatal: it may sit in LD_LIBRARY_PATH. If FFmpeg cannot load it, the trials say "cpu".
		echo "bench/gpu: warning: libcuda.so.1 is not in the loader cache" >&2
	fi
	ffmpeg -hide_banner -hwaccels 2>/dev/null | grep -qx 'cuda' || die "this FFmpeg build lists no cuda hwaccel (ffmpeg -hwaccels)" 3
	GPU="$(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null | head -n1 ||
		nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n1)"
fi
echo "bench/gpu: GPU: $GPU"

# --- 2. build ------------------------------------------------------------------------------------------
if [[ -n "${FRAMESWEEP_BIN:-}" ]]; then
	BIN="$FRAMESWEEP_BIN"
else
	# shellcheck disable=SC1091
	source scripts/env.sh
	BIN="$OUT/framesweep"
	echo "bench/gpu: building $BIN"
	timeout 300 go build -o "$BIN" ./cmd/framesweep || die "go build failed"
fi
"$BIN" version >/dev/null || die "$BIN does not run"

# --- 3. per codec: the device's expectation, then framesweep against the CPU path ----------------------
# trial CLIP: "gpu" when the ffmpeg CLI decodes the first frames on the device, else "cpu"; the reason
# (ffmpeg's last stderr line) goes to $OUT/NAME.trial.
trial() {
	local clip="$1" log="$2"
	if timeout 60 ffmpeg -hide_banner -loglevel error -nostdin -hwaccel cuda -hwaccel_output_format cuda -i "$clip" \
		-frames:v 8 -vf 'hwdownload,format=nv12|p010le|p016le|yuv444p|yuv444p16le' -f null - >"$log" 2>&1; then
		echo gpu
	else
		echo cpu
	fi
}

if [[ $SELFTEST -eq 1 ]]; then
	SIZE=320x180 SECS=1
else
	SIZE=1280x720 SECS=4
fi
# name | ffmpeg encoder arguments
CLIPS=(
	"h264-8bit|-c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p"
	"h264-10bit|-c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p10le"
	"hevc-8bit|-c:v libx265 -preset veryfast -x265-params log-level=error:keyint=60 -pix_fmt yuv420p"
	"hevc-10bit|-c:v libx265 -preset veryfast -x265-params log-level=error:keyint=60 -pix_fmt yuv420p10le"
	"vp9-8bit|-c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 2M -g 60 -pix_fmt yuv420p"
	"av1-8bit|-c:v libaom-av1 -usage realtime -cpu-used 8 -b:v 2M -g 60 -pix_fmt yuv420p"
)
for spec in "${CLIPS[@]}"; do
	IFS='|' read -r name enc <<<"$spec"
	clip="$OUT/$name.mkv"
	# The pattern moves, so consecutive frames differ.
	# shellcheck disable=SC2086
	timeout 120 ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=$SIZE:rate=30" -t "$SECS" $enc "$clip" \
		|| { note "$name: FAIL (ffmpeg could not encode the clip)"; FAIL=1; continue; }
	expect="$(trial "$clip" "$OUT/$name.trial")"
	if [[ $expect == gpu ]]; then
		source_="ffmpeg trial decoded on the device"
	else
		source_="ffmpeg trial: $(tail -n1 "$OUT/$name.trial" 2>/dev/null | cut -c1-120)"
		[[ "$source_" == "ffmpeg trial: " ]] && source_="ffmpeg trial fell back to the CPU"
	fi
	json="$OUT/$name.json"
	if ! timeout 120 "$BIN" bench decode --video "$clip" --threads 0 --hwaccel cuda --compare 16 --json --quiet >"$json" 2>"$OUT/$name.err"; then
		# bench decode exits 1 on a frame-count or comparison failure but still prints its rows.
		[[ -s "$json" ]] || { note "FAIL $name: framesweep bench decode: $(tail -n1 "$OUT/$name.err")"; FAIL=1; continue; }
	fi
	set +e
	verdict="$("$PY" "$HERE/verdict.py" decode "$json" "$name" "$expect" "$source_" "$PSNR_MIN")"
	rc=$?
	set -e
	note "$verdict"
	[[ $rc -eq 0 ]] || FAIL=1
	[[ "$verdict" == WARN* ]] && WARN=1
done

# --- 4. the 60 s 1080p30 clip: cuda vs CPU, parallel streams, decoder creation, peers ------------------
CACHE="${FRAMESWEEP_BENCH_CACHE:-$HOME/.cache/framesweep/bench}"
mkdir -p "$CACHE"
if [[ $SELFTEST -eq 1 ]]; then
	BIG="$OUT/h264-8bit.mkv"
	STREAMS="${STREAMS:-1 4}"
	REPS=2
else
	BIG="$CACHE/testsrc2-1920x1080-30fps-60s-h264-8bit-gop250.mkv" # bench.BenchClip(250), shared with bench grid
	if [[ ! -s "$BIG" ]]; then
		timeout 240 ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i testsrc2=size=1920x1080:rate=30 -t 60 \
			-c:v libx264 -preset veryfast -g 250 -pix_fmt yuv420p "$BIG.part.mkv" && mv "$BIG.part.mkv" "$BIG"
	fi
	STREAMS="${STREAMS:-1 4 16}"
	REPS=5
fi
[[ -s "$BIG" ]] || die "no clip $BIG"

if [[ $SELFTEST -eq 0 ]]; then
	TIMING="$OUT/timing.txt"
	if timeout 240 "$BIN" bench decode --video "$BIG" --threads 0 --hwaccel cuda --compare 32 --format benchstat --quiet >"$TIMING" 2>"$OUT/timing.err"; then
		note "timing (60 s 1080p30 H.264, cuda vs CPU): $(grep -E '^Benchmark.*variant=decode/hwaccel=cuda' "$TIMING" | tr '\t' ' ' | sed 's/  */ /g')"
	else
		note "timing: FAIL ($(tail -n1 "$OUT/timing.err"))"
		FAIL=1
	fi
fi

# Parallel streams: N processes at once, each decoding every frame (one served index per GOP end forces
# the whole clip through the decoder; only those few are converted and written, at 64x64).
FRAMES="$("$BIN" probe "$BIG" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["frames"])')"
IDX="$("$PY" -c "n=$FRAMES; print(','.join(str(i) for i in sorted(set(list(range(249, n, 250)) + [n - 1]))))")"
for hw in cuda none; do
	for n in $STREAMS; do
		d="$OUT/streams-$hw-$n"
		mkdir -p "$d"
		t0="$(now)"
		pids=()
		for i in $(seq 1 "$n"); do
			"$BIN" frames "$BIG" --indices "$IDX" --size 64x64 --out "$d/$i" --hwaccel "$hw" >"$d/$i.json" 2>"$d/$i.err" &
			pids+=($!)
		done
		ok=1
		for p in "${pids[@]}"; do wait "$p" || ok=0; done
		wall="$(elapsed "$t0" "$(now)")"
		if [[ $ok -eq 0 ]]; then
			note "FAIL streams hw=$hw n=$n: $(cat "$d"/*.err | tail -n1)"
			FAIL=1
			continue
		fi
		outs=()
		for i in $(seq 1 "$n"); do outs+=("$d/$i.json"); done
		set +e
		line="$("$PY" "$HERE/verdict.py" streams "$hw" "$n" "$wall" "$FRAMES" "${outs[@]}")"
		rc=$?
		set -e
		note "$line"
		[[ $rc -eq 0 ]] || FAIL=1
	done
done

# Decoder creation: first-frame latency (open, device and decoder creation, one frame) cuda vs CPU.
declare -A FIRST=()
for hw in cuda none; do
	ts=()
	for r in $(seq 1 "$REPS"); do
		t0="$(now)"
		"$BIN" frames "$BIG" --indices 0 --out "$OUT/first-$hw-$r" --hwaccel "$hw" >"$OUT/first-$hw-$r.json" 2>&1 || { FAIL=1; break; }
		ts+=("$(elapsed "$t0" "$(now)")")
	done
	FIRST[$hw]="$(printf '%s\n' "${ts[@]}" | median)"
done
used="$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["stats"]["hwaccel"])' "$OUT/first-cuda-1.json" 2>/dev/null || echo unknown)"
note "decoder creation: first frame cuda ${FIRST[cuda]} s vs CPU ${FIRST[none]} s (median of $REPS; difference $(elapsed "${FIRST[none]}" "${FIRST[cuda]}") s; device used: $used)"

if [[ $SELFTEST -eq 0 && $PEERS -eq 1 ]]; then
	PEERSOUT="$OUT/peers.txt"
	if timeout 300 "$BIN" bench peers --video "$BIG" --reps 1 --python "$PY" --format benchstat --quiet >"$PEERSOUT" 2>"$OUT/peers.err"; then
		note "peers (CPU path): $(grep -E '^# Benchmark.*summary' "$PEERSOUT" | sed 's/^# //')"
	else
		note "peers: FAIL ($(tail -n1 "$OUT/peers.err"))"
		FAIL=1
	fi
	ts=()
	for r in 1 2 3; do
		t0="$(now)"
		ffmpeg -hide_banner -loglevel error -nostdin -hwaccel cuda -hwaccel_output_format cuda -i "$BIG" -f null - 2>>"$OUT/ffmpeg-cuda.err" || break
		ts+=("$(elapsed "$t0" "$(now)")")
	done
	[[ ${#ts[@]} -gt 0 ]] && note "ffmpeg -hwaccel cuda bare decode of the 60 s clip: $(printf '%s\n' "${ts[@]}" | median) s (median of ${#ts[@]})"
fi

# --- 5. in process: llama.cpp on CUDA vs the CPU -----------------------------------------------------
TM="$OUT/tiny-qwen25vl"
"$BIN" testmodel --arch qwen25vl --out "$TM" >/dev/null || die "framesweep testmodel failed"
LLSPEC="llamacpp:model=$TM/tiny-qwen25vl.gguf,mmproj=$TM/tiny-qwen25vl-mmproj.gguf,threads=1"
ask() { # ask DEVICE OUT.json
	timeout 120 "$BIN" ask --runtime "$LLSPEC,device=$1" "$OUT/h264-8bit.mkv" --question "Which pattern comes first?" \
		--options "A. circles" "B. bars" "C. text" "D. noise" --preset qwen2.5-vl --frames 8 --json >"$2" 2>"$2.err"
}
if ask cpu "$OUT/llama-cpu.json"; then
	if [[ $SELFTEST -eq 1 ]]; then
		# No GPU: the comparison runs on two CPU answers, and asking for CUDA must be refused by name.
		ask cpu "$OUT/llama-cpu2.json" || die "the second CPU answer failed: $(tail -n1 "$OUT/llama-cpu2.json.err")"
		"$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); r["runtime_backend"]="CUDA0 (self-test stand-in)"; json.dump(r,open(sys.argv[1],"w"))' "$OUT/llama-cpu2.json"
		set +e
		verdict="$("$PY" "$HERE/verdict.py" llama "$OUT/llama-cpu2.json" "$OUT/llama-cpu.json" "$LLAMA_TOL")"
		rc=$?
		set -e
		note "$verdict"
		[[ $rc -eq 0 ]] || FAIL=1
		if ask cuda0 "$OUT/llama-cuda.json" || ! grep -q 'device=cuda0' "$OUT/llama-cuda.json.err"; then
			note "FAIL llama.cpp device=cuda0 without a CUDA backend: $(tail -n1 "$OUT/llama-cuda.json.err")"
			FAIL=1
		else
			note "llama.cpp device=cuda0 refused by name: $(tail -n1 "$OUT/llama-cuda.json.err" | cut -c1-160)"
		fi
	elif ask cuda0 "$OUT/llama-cuda.json"; then
		set +e
		verdict="$("$PY" "$HERE/verdict.py" llama "$OUT/llama-cuda.json" "$OUT/llama-cpu.json" "$LLAMA_TOL")"
		rc=$?
		set -e
		note "$verdict"
		[[ $rc -eq 0 ]] || FAIL=1
	else
		note "FAIL llama.cpp on CUDA: $(tail -n1 "$OUT/llama-cuda.json.err")"
		FAIL=1
	fi
else
	note "FAIL llama.cpp on the CPU: $(tail -n1 "$OUT/llama-cpu.json.err")"
	FAIL=1
fi

echo
echo "bench/gpu summary ($GPU; PSNR threshold $PSNR_MIN dB; work dir $OUT)"
for line in "${SUMMARY[@]}"; do echo "  $line"; done
[[ -s "${TIMING:-}" ]] && { echo; cat "$TIMING"; }
[[ -s "${PEERSOUT:-}" ]] && { echo; cat "$PEERSOUT"; }
if [[ $FAIL -ne 0 ]]; then
	echo "bench/gpu: FAILED" >&2
	exit 1
fi
[[ $WARN -ne 0 ]] && echo "bench/gpu: passed with warnings (framesweep's device choice differs from the trial; see WARN lines)"
echo "bench/gpu: all checks passed"
