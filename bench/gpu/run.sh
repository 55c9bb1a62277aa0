#!/usr/bin/env bash
# bench/gpu/run.sh: the GPU host check, one bounded script for a 15-minute window (docs/bench.md
# "bench/gpu").
#
#   bash bench/gpu/run.sh              # repository root, a GPU host; exit 0 when every section passed
#   bash bench/gpu/run.sh --self-test  # no GPU: stand-in libraries, tiny clips, every section, ≤ 2 min
#
# Sections, each in its own time box (`timeout`, the whole process group killed on expiry), in order:
#   build      240 s  go build, unless FRAMESWEEP_BIN names a binary (carry one to save the window)
#   preflight   30 s  `framesweep doctor`: driver, CUDA runtime and cuBLAS, the llama.cpp CUDA build,
#                     NVDEC per codec, devices. Without a driver the run stops here (exit 3).
#   nvdec      240 s  per codec (H.264/HEVC 8/10-bit, VP9, AV1): a trial decode with the ffmpeg CLI says
#                     what the device takes; `framesweep bench decode --hwaccel cuda --compare 16`
#                     decodes on the device and the CPU: exact frame counts, PSNR, speed (verdict.py);
#                     then the 60 s 1080p30 H.264 clip, cuda vs CPU.
#   model      120 s  the tiny Qwen2.5-VL model asked the same question in process on CUDA (device=cuda0)
#                     and on the CPU: same choice, probabilities within LLAMA_TOL, tokens/s of each.
#   streams    240 s  decode latency under N concurrent streams (STREAMS, default 1 4 16), cuda and CPU:
#                     each stream's wall time, aggregate frames/s; first-frame latency (decoder creation).
#   peers      300 s  only with PEERS=1: `framesweep bench peers` on the clip and the ffmpeg CLI's bare
#                     cuda decode (off by default: it does not fit the window with the rest).
# Then a summary table (section, status, seconds, box, detail) and exit 0 only when every section
# passed; otherwise exit 1 naming the sections that failed or timed out. Everything under a hard cap
# of 14 minutes. Knobs: PSNR_MIN (35), LLAMA_TOL (0.02), STREAMS, PEERS (0), FRAMESWEEP_BIN,
# FRAMESWEEP_BENCH_CACHE, OUT (work dir, kept), PYTHON (/usr/bin/python3).
#
# --self-test runs every section on this machine without a GPU: the preflight must name each missing
# piece and exit 1 within 10 s, and, on stand-in libraries (standins.sh) for a CUDA-12-only host, find
# that host's driver, runtime and CUDA 12 build; every decode falls back to the CPU with its frames
# still exact; the model section compares two CPU answers and requires device=cuda0 on the stand-in
# host to be refused naming the CUDA 12 build it chose; and a section that overruns its box is cut off
# and named.
set -euo pipefail
SELF="$(realpath "${BASH_SOURCE[0]}")"
cd "$(dirname "$SELF")/../.."
HERE=bench/gpu

if [[ "${1:-}" == "--section" ]]; then
	SECTION_MODE=1
	SECTION="${2:?}"
else
	SECTION_MODE=0
	SELFTEST=0
	[[ "${1:-}" == "--self-test" ]] && SELFTEST=1
	[[ $# -eq 0 || ($# -eq 1 && $SELFTEST -eq 1) ]] || { echo "usage: bash bench/gpu/run.sh [--self-test]" >&2; exit 2; }
	export SELFTEST
	LIMIT_S=840
	if [[ -z "${FRAMESWEEP_GPU_TIMED:-}" ]]; then
		export FRAMESWEEP_GPU_TIMED=1
		# The whole run under a hard wall-clock limit; the process group dies with it.
		exec timeout --kill-after=10 "$LIMIT_S" bash "$SELF" "$@"
	fi
	export OUT="${OUT:-$(mktemp -d /tmp/framesweep-gpu.XXXXXX)}"
	mkdir -p "$OUT"
	export PSNR_MIN="${PSNR_MIN:-35}" LLAMA_TOL="${LLAMA_TOL:-0.02}" PEERS="${PEERS:-0}"
	PY="${PYTHON:-/usr/bin/python3}"
	[[ -x "$PY" ]] || PY=python3
	export PY
fi

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# note LINE: one line of the running section, on stdout and in its notes file.
note() { echo "  $1"; echo "$1" >>"$OUT/$SECTION.notes"; }
fail() { note "FAIL $1"; FAILED=1; }
FAILED=0

# --- the sections (each runs as `bash run.sh --section NAME` under its own timeout) ---------------------

section_build() {
	source scripts/env.sh
	go build -o "$OUT/framesweep" ./cmd/framesweep || { fail "go build"; return; }
	note "built $OUT/framesweep"
}

# standins: a CUDA-12-only host of stand-in libraries (self-test only).
standin_host12() {
	local si="$OUT/standins"
	[[ -d "$si/cuda" ]] || bash "$HERE/standins.sh" "$si" >/dev/null
	export FRAMESWEEP_LLAMA_CUDA="$si/cuda" FRAMESWEEP_CUDA_PYTHON="$si/host12/venv"
	export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$si/driver12"
}

section_preflight() {
	local t0 rc
	t0="$(now)"
	set +e
	"$BIN" doctor >"$OUT/doctor.txt" 2>"$OUT/doctor.err"
	rc=$?
	set -e
	sed 's/^/    /' "$OUT/doctor.txt"
	if [[ $SELFTEST -eq 0 ]]; then
		note "GPU: $(timeout 10 nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>&1 | head -n1)"
		[[ $rc -eq 0 ]] || fail "doctor: $(tail -n1 "$OUT/doctor.err")"
		grep -q '^driver .* ok ' "$OUT/doctor.txt" || { echo nodriver >"$OUT/preflight.stop"; fail "no NVIDIA driver: the GPU sections cannot run"; }
		return
	fi
	# No GPU here: every piece must be named missing, in one line each, exit 1, within 10 s.
	local took n
	took="$(elapsed "$t0" "$(now)")"
	n="$(grep -c . "$OUT/doctor.txt")"
	if [[ $rc -ne 1 ]] || awk -v t="$took" 'BEGIN { exit !(t > 10) }' || ! grep -q 'driver, cuda, llama, nvdec, devices' "$OUT/doctor.err"; then
		fail "doctor without a GPU: exit $rc after $took s: $(tail -n1 "$OUT/doctor.err")"
	else
		note "doctor without a GPU: exit 1 after $took s, $n lines, missing: driver, cuda, llama, nvdec, devices"
	fi
	( standin_host12
	  set +e
	  "$BIN" doctor --check driver,cuda,llama >"$OUT/doctor-12.txt" 2>&1
	  echo $? >"$OUT/doctor-12.rc" )
	if [[ "$(cat "$OUT/doctor-12.rc")" != 0 ]] || ! grep -q 'CUDA 12 build' "$OUT/doctor-12.txt"; then
		fail "doctor on the stand-in CUDA 12 host: $(tail -n2 "$OUT/doctor-12.txt")"
	else
		note "doctor on the stand-in CUDA 12 host: exit 0, $(grep -o 'CUDA 12 build [^ ]*' "$OUT/doctor-12.txt")"
	fi
}

# trial CLIP LOG: "gpu" when the ffmpeg CLI keeps the first frames on the device (a software fallback
# makes the hwdownload filter fail), else "cpu".
trial() {
	if timeout 30 ffmpeg -hide_banner -loglevel error -nostdin -hwaccel cuda -hwaccel_output_format cuda -i "$1" \
		-frames:v 8 -vf 'hwdownload,format=nv12|p010le|p016le|yuv444p|yuv444p16le' -f null - >"$2" 2>&1; then
		echo gpu
	else
		echo cpu
	fi
}

section_nvdec() {
	local size=1280x720 secs=4 warn=0
	[[ $SELFTEST -eq 1 ]] && size=320x180 secs=1
	local clips=(
		"h264-8bit|-c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p"
		"h264-10bit|-c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p10le"
		"hevc-8bit|-c:v libx265 -preset veryfast -x265-params log-level=error:keyint=60 -pix_fmt yuv420p"
		"hevc-10bit|-c:v libx265 -preset veryfast -x265-params log-level=error:keyint=60 -pix_fmt yuv420p10le"
		"vp9-8bit|-c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 2M -g 60 -pix_fmt yuv420p"
		"av1-8bit|-c:v libaom-av1 -usage realtime -cpu-used 8 -b:v 2M -g 60 -pix_fmt yuv420p"
	)
	local spec name enc clip expect src json verdict rc
	for spec in "${clips[@]}"; do
		IFS='|' read -r name enc <<<"$spec"
		clip="$OUT/$name.mkv"
		# shellcheck disable=SC2086
		timeout 60 ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=$size:rate=30" -t "$secs" $enc "$clip" ||
			{ fail "$name: ffmpeg could not encode the clip"; continue; }
		expect="$(trial "$clip" "$OUT/$name.trial")"
		src="ffmpeg trial decoded on the device"
		[[ $expect == gpu ]] || src="ffmpeg trial: $(tail -n1 "$OUT/$name.trial" 2>/dev/null | cut -c1-100)"
		json="$OUT/$name.json"
		if ! timeout 60 "$BIN" bench decode --video "$clip" --threads 0 --hwaccel cuda --compare 16 --json --quiet >"$json" 2>"$OUT/$name.err"; then
			[[ -s "$json" ]] || { fail "$name: framesweep bench decode: $(tail -n1 "$OUT/$name.err")"; continue; }
		fi
		set +e
		verdict="$("$PY" "$HERE/verdict.py" decode "$json" "$name" "$expect" "$src" "$PSNR_MIN")"
		rc=$?
		set -e
		note "$verdict"
		[[ $rc -eq 0 ]] || FAILED=1
		[[ "$verdict" == WARN* ]] && warn=1
	done
	[[ $SELFTEST -eq 1 ]] && return
	local big
	big="$(big_clip)" || { fail "no 60 s clip"; return; }
	if timeout 120 "$BIN" bench decode --video "$big" --threads 0 --hwaccel cuda --compare 32 --format benchstat --quiet >"$OUT/timing.txt" 2>"$OUT/timing.err"; then
		note "timing (60 s 1080p30 H.264, cuda vs CPU): $(grep -E '^Benchmark.*variant=decode/hwaccel=cuda' "$OUT/timing.txt" | tr '\t' ' ' | sed 's/  */ /g')"
	else
		fail "timing: $(tail -n1 "$OUT/timing.err")"
	fi
}

# big_clip prints the path of the 60 s 1080p30 H.264 clip (bench.BenchClip(250), shared with bench grid).
big_clip() {
	local cache="${FRAMESWEEP_BENCH_CACHE:-$HOME/.cache/framesweep/bench}" big
	mkdir -p "$cache"
	big="$cache/testsrc2-1920x1080-30fps-60s-h264-8bit-gop250.mkv"
	if [[ ! -s "$big" ]]; then
		timeout 100 ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i testsrc2=size=1920x1080:rate=30 -t 60 \
			-c:v libx264 -preset veryfast -g 250 -pix_fmt yuv420p "$big.part.mkv" && mv "$big.part.mkv" "$big"
	fi
	[[ -s "$big" ]] && echo "$big"
}

section_model() {
	local tm="$OUT/tiny-qwen25vl" clip="$OUT/model-clip.mkv" verdict rc
	"$BIN" testmodel --arch qwen25vl --out "$tm" >/dev/null || { fail "framesweep testmodel"; return; }
	timeout 30 ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i testsrc2=size=320x180:rate=30 -t 1 -c:v libx264 -pix_fmt yuv420p "$clip" ||
		{ fail "ffmpeg could not encode the clip"; return; }
	local spec="llamacpp:model=$tm/tiny-qwen25vl.gguf,mmproj=$tm/tiny-qwen25vl-mmproj.gguf,threads=1"
	ask() { # ask DEVICE OUT.json
		timeout 40 "$BIN" ask --runtime "$spec,device=$1" "$clip" --question "Which pattern comes first?" \
			--options "A. circles" "B. bars" "C. text" "D. noise" --preset qwen2.5-vl --frames 8 --json >"$2" 2>"$2.err"
	}
	ask cpu "$OUT/llama-cpu.json" || { fail "llama.cpp on the CPU: $(tail -n1 "$OUT/llama-cpu.json.err")"; return; }
	if [[ $SELFTEST -eq 0 ]]; then
		ask cuda0 "$OUT/llama-cuda.json" || { fail "llama.cpp on CUDA: $(tail -n1 "$OUT/llama-cuda.json.err")"; return; }
	else
		# No GPU: the comparison runs on two CPU answers, and device=cuda0 on the stand-in CUDA 12 host
		# must be refused naming the build the loader chose.
		ask cpu "$OUT/llama-cuda.json" || { fail "the second CPU answer: $(tail -n1 "$OUT/llama-cuda.json.err")"; return; }
		"$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); r["runtime_backend"]="CUDA0 (self-test stand-in)"; json.dump(r,open(sys.argv[1],"w"))' "$OUT/llama-cuda.json"
		if ( standin_host12; ask cuda0 "$OUT/llama-standin.json" ) || ! grep -q 'cuda/12/libggml-cuda.so' "$OUT/llama-standin.json.err"; then
			fail "device=cuda0 on the stand-in CUDA 12 host: $(tail -n1 "$OUT/llama-standin.json.err")"
		else
			note "device=cuda0 on the stand-in CUDA 12 host refused by name: $(tail -n1 "$OUT/llama-standin.json.err" | grep -o 'cuda/12/libggml-cuda.so.*' | cut -c1-120)"
		fi
	fi
	set +e
	verdict="$("$PY" "$HERE/verdict.py" llama "$OUT/llama-cuda.json" "$OUT/llama-cpu.json" "$LLAMA_TOL")"
	rc=$?
	set -e
	note "$verdict"
	[[ $rc -eq 0 ]] || FAILED=1
}

section_streams() {
	local big streams reps gop=250
	if [[ $SELFTEST -eq 1 ]]; then
		big="$OUT/streams-clip.mkv" gop=30
		timeout 30 ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i testsrc2=size=320x180:rate=30 -t 2 -c:v libx264 -g $gop -pix_fmt yuv420p "$big" ||
			{ fail "ffmpeg could not encode the clip"; return; }
		streams="${STREAMS:-1 4}" reps=2
	else
		big="$(big_clip)" || { fail "no 60 s clip"; return; }
		streams="${STREAMS:-1 4 16}" reps=5
	fi
	local frames idx hw n d i p ok line rc
	frames="$("$BIN" probe "$big" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["frames"])')"
	# One served index per GOP end forces every frame through the decoder; only those few are written.
	idx="$("$PY" -c "n=$frames; print(','.join(str(i) for i in sorted(set(list(range($gop - 1, n, $gop)) + [n - 1]))))")"
	for hw in cuda none; do
		for n in $streams; do
			d="$OUT/streams-$hw-$n"
			mkdir -p "$d"
			local t0 pids=()
			t0="$(now)"
			for i in $(seq 1 "$n"); do
				( s="$(now)"; "$BIN" frames "$big" --indices "$idx" --size 64x64 --out "$d/$i" --hwaccel "$hw" >"$d/$i.json" 2>"$d/$i.err"
				  rc=$?; elapsed "$s" "$(now)" >"$d/$i.json.wall"; exit $rc ) &
				pids+=($!)
			done
			ok=1
			for p in "${pids[@]}"; do wait "$p" || ok=0; done
			[[ $ok -eq 1 ]] || { fail "streams hw=$hw n=$n: $(cat "$d"/*.err | tail -n1)"; continue; }
			set +e
			line="$("$PY" "$HERE/verdict.py" streams "$hw" "$n" "$(elapsed "$t0" "$(now)")" "$frames" "$d"/[0-9]*.json)"
			rc=$?
			set -e
			note "$line"
			[[ $rc -eq 0 ]] || FAILED=1
		done
	done
	# Decoder creation: first-frame latency (open, device and decoder creation, one frame).
	local first_cuda first_none ts r
	for hw in cuda none; do
		ts=()
		for r in $(seq 1 "$reps"); do
			local s
			s="$(now)"
			"$BIN" frames "$big" --indices 0 --out "$OUT/first-$hw-$r" --hwaccel "$hw" >"$OUT/first-$hw-$r.json" 2>&1 || { fail "first frame hw=$hw"; break; }
			ts+=("$(elapsed "$s" "$(now)")")
		done
		[[ $hw == cuda ]] && first_cuda="$(printf '%s\n' "${ts[@]}" | median)" || first_none="$(printf '%s\n' "${ts[@]}" | median)"
	done
	note "decoder creation: first frame cuda ${first_cuda:-?} s vs CPU ${first_none:-?} s (median of $reps; device used: $("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["stats"]["hwaccel"])' "$OUT/first-cuda-1.json" 2>/dev/null || echo unknown))"
}

section_peers() {
	local big ts=() r s
	big="$(big_clip)" || { fail "no 60 s clip"; return; }
	if timeout 200 "$BIN" bench peers --video "$big" --reps 1 --python "$PY" --format benchstat --quiet >"$OUT/peers.txt" 2>"$OUT/peers.err"; then
		note "peers (CPU path): $(grep -E '^# Benchmark.*summary' "$OUT/peers.txt" | sed 's/^# //')"
	else
		fail "peers: $(tail -n1 "$OUT/peers.err")"
	fi
	for r in 1 2 3; do
		s="$(now)"
		timeout 60 ffmpeg -hide_banner -loglevel error -nostdin -hwaccel cuda -hwaccel_output_format cuda -i "$big" -f null - 2>>"$OUT/ffmpeg-cuda.err" || break
		ts+=("$(elapsed "$s" "$(now)")")
	done
	[[ ${#ts[@]} -gt 0 ]] && note "ffmpeg -hwaccel cuda bare decode of the 60 s clip: $(printf '%s\n' "${ts[@]}" | median) s (median of ${#ts[@]})"
}

# section_overrun exists for the self-test: it sleeps past its box, which must cut it off.
section_overrun() { sleep 60; }

if [[ $SECTION_MODE -eq 1 ]]; then
	: >"$OUT/$SECTION.notes"
	"section_$SECTION"
	exit "$FAILED"
fi

# --- the driver: each section under its box, then the summary ------------------------------------------

declare -a ROWS=()
declare -a FAILED_SECTIONS=()
# run NAME BOX: one section under timeout; its status is ok, FAIL or TIMEOUT.
run() {
	local name="$1" box="$2" t0 rc status detail
	echo "bench/gpu: $name (box $box s)"
	t0="$(now)"
	set +e
	timeout --kill-after=5 "$box" bash "$SELF" --section "$name"
	rc=$?
	set -e
	case $rc in
	0) status=ok ;;
	124 | 137) status=TIMEOUT ;;
	*) status=FAIL ;;
	esac
	detail="$(grep -m1 '^FAIL' "$OUT/$name.notes" 2>/dev/null || tail -n1 "$OUT/$name.notes" 2>/dev/null || true)"
	[[ $status == TIMEOUT ]] && detail="cut off after $box s; last: ${detail:-nothing}"
	ROWS+=("$(printf '%-10s %-8s %8.1f %6s  %s' "$name" "$status" "$(elapsed "$t0" "$(now)")" "$box" "${detail:0:150}")")
	[[ $status == ok ]] || FAILED_SECTIONS+=("$name")
	return 0
}

summary() {
	echo
	echo "bench/gpu summary (work dir $OUT; PSNR threshold $PSNR_MIN dB; self-test $SELFTEST)"
	printf '%-10s %-8s %8s %6s  %s\n' section status seconds box detail
	printf '%s\n' "${ROWS[@]}"
}

if [[ -n "${FRAMESWEEP_BIN:-}" ]]; then
	export BIN="$FRAMESWEEP_BIN"
else
	export BIN="$OUT/framesweep"
	run build 240
fi
"$BIN" version >/dev/null 2>&1 || { summary; echo "bench/gpu: $BIN does not run" >&2; exit 1; }
run preflight 30
if [[ -f "$OUT/preflight.stop" ]]; then
	summary
	echo "bench/gpu: no NVIDIA driver on this host (see the preflight); run it on a GPU host, or --self-test" >&2
	exit 3
fi
run nvdec 240
run model 120
run streams 240
[[ $PEERS -eq 1 && $SELFTEST -eq 0 ]] && run peers 300
if [[ $SELFTEST -eq 1 ]]; then
	"$PY" "$HERE/verdict.py" self-test >"$OUT/verdict.txt" || { cat "$OUT/verdict.txt"; FAILED_SECTIONS+=(verdict); }
	# The boxes themselves: a section that overruns is cut off and named.
	run overrun 2
	if [[ "${FAILED_SECTIONS[*]: -1}" == overrun ]] && [[ "${ROWS[*]: -1}" == *TIMEOUT* ]]; then
		unset 'FAILED_SECTIONS[-1]'
		ROWS[-1]="${ROWS[-1]/TIMEOUT /cut-ok  }"
	else
		FAILED_SECTIONS+=(boxes)
	fi
fi
summary
if [[ ${#FAILED_SECTIONS[@]} -gt 0 ]]; then
	echo "bench/gpu: FAILED sections: ${FAILED_SECTIONS[*]}" >&2
	exit 1
fi
echo "bench/gpu: all sections passed"
