#!/usr/bin/env bash
# A hostile replay against `framesweep serve` (issue 23), on 127.0.0.1 only: each attack class that once
# succeeded is tried again, and the script exits 1 if any succeeds.
#   swap      a name inside the root swapped (renameat2 RENAME_EXCHANGE) between a hard link to a video
#             inside and a symlink to a video outside, and a directory with a symlink to an outside one,
#             thousands of times, while clients ask for them: any response carrying the outside video's
#             description, digest or frames is a leak (also with --worker in the full form)
#   rebind    requests whose Host is not the server's (DNS rebinding): any 2xx succeeds
#   form      cross-site posts: text/plain and form bodies (valid JSON inside), a foreign Origin,
#             Sec-Fetch-Site: cross-site: any 2xx succeeds
#   token     --token-file on a FIFO, /dev/zero and a link to it: serve must exit 1 at once with one
#             line naming the file (a hang past 10 s or 512 MiB of RSS succeeds)
#   memory    large objects 4 at a time: peak and idle RSS against docs/serve.md's bound
#
# usage: scripts/campaign/serve.sh [--short] [swap|browser|token|memory…]   (--short: the form `make test`
# runs, ~15 s; else ≤ 60 s; naming classes runs only those)
# FRAMESWEEP_BIN names the binary (default bin/framesweep, built when missing). For a larger memory run
# by hand: CAMPAIGN_MEM_REQUESTS, CAMPAIGN_MEM_FRAMES, CAMPAIGN_MEM_SIZE (WxH), CAMPAIGN_MEM_MAX_MB.
set -euo pipefail
cd "$(dirname "$0")/../.."
short=0
if [ "${1:-}" = "--short" ]; then
  short=1
  shift
fi
classes=" ${*:-swap browser token memory} " # a subset may be named: serve.sh memory
want() { [[ $classes == *" $1 "* ]]; }

BIN=${FRAMESWEEP_BIN:-bin/framesweep}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
if [ ! -x "$BIN" ]; then
  # shellcheck disable=SC1091
  source scripts/env.sh
  BIN=$work/framesweep
  go build -o "$BIN" ./cmd/framesweep
fi
BIN=$(readlink -f "$BIN")
VIDEOS=$PWD/testdata/videos
failed=()

report() { # class ok|fail message
  if [ "$2" = ok ]; then echo "serve/$1: ok ($3)"; else echo "serve/$1: FAILED ($3)"; failed+=("$1"); fi
}

# serve_start DIR ARGS…: starts serve on 127.0.0.1:0 and sets URL and SPID.
serve_start() {
  local dir=$1
  shift
  mkdir -p "$dir"
  "$BIN" serve --addr 127.0.0.1:0 "$@" >"$dir/ready" 2>"$dir/log" &
  SPID=$!
  pids+=("$SPID")
  for _ in $(seq 300); do
    if [ -s "$dir/ready" ]; then
      URL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$dir/ready")
      return 0
    fi
    kill -0 "$SPID" 2>/dev/null || break
    sleep 0.1
  done
  echo "serve did not start: $(cat "$dir/log")" >&2
  return 1
}

serve_stop() {
  kill "$SPID" 2>/dev/null || true
  wait "$SPID" 2>/dev/null || true
}

# --- swap: symlink/hard link swaps inside the root --------------------------------------------------
swap() { # seconds pause [serve flags…]: pause > 0 swaps in bursts of 2000 with pauses of that many
  # seconds between them, so that a slow open (a worker process per request) can also succeed
  local secs=$1 pause=$2
  shift 2
  local root=$work/swap/root out=$work/swap/outside
  rm -rf "$work/swap"
  mkdir -p "$root/d" "$out"
  cp "$VIDEOS/h265_video.mp4" "$root/a.mp4"
  cp "$VIDEOS/video_90.mov" "$out/x.mp4"
  ln "$root/a.mp4" "$root/x.mp4"
  ln -s "$out/x.mp4" "$root/x.alt"
  ln "$root/a.mp4" "$root/d/x.mp4"
  ln -s "$out" "$root/d.alt"
  serve_start "$work/swap/srv" --root "$root" --max-inflight 16 --share-window 0 "$@"
  local res
  res=$(python3 - "$URL" "$root" "$out" "$secs" "$pause" <<'PY'
import ctypes, hashlib, http.client, json, os, sys, threading, time, urllib.parse
url, root, out, secs, pause = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
host, port = urllib.parse.urlsplit(url).hostname, urllib.parse.urlsplit(url).port
inside = hashlib.sha256(open(os.path.join(root, "a.mp4"), "rb").read()).hexdigest()
outside = hashlib.sha256(open(os.path.join(out, "x.mp4"), "rb").read()).hexdigest()
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
stop, swaps = threading.Event(), [0]
def swapper():
    i = 0
    while not stop.is_set():
        a, b = ("x.mp4", "x.alt") if i % 2 == 0 else ("d", "d.alt")
        if libc.renameat2(AT_FDCWD, os.path.join(root, a).encode(), AT_FDCWD, os.path.join(root, b).encode(), RENAME_EXCHANGE) != 0:
            raise OSError(ctypes.get_errno(), "renameat2")
        swaps[0] += 1
        i += 1
        if pause > 0 and i % 2000 == 0:
            time.sleep(pause)
lock, stats, leaks = threading.Lock(), {"ok": 0, "refused": 0, "requests": 0}, []
def client(c):
    conn = http.client.HTTPConnection(host, port, timeout=60)
    i, deadline = c, time.time() + secs
    while time.time() < deadline:
        name = ["x.mp4", "d/x.mp4"][i % 2]
        ep = ["probe", "plan", "frames"][(i // 2) % 3]
        i += 4
        body = json.dumps({"video": name, "policy": "uniform", "frames": 2, "resolution": "32x32"})
        if ep == "probe":
            conn.request("GET", "/v1/probe?video=" + urllib.parse.quote(name))
        else:
            conn.request("POST", "/v1/" + ep, body, {"Content-Type": "application/json"})
        r = conn.getresponse()
        data = r.read()
        leak = out in data.decode("latin-1")
        if r.status == 200:
            if ep == "probe":
                info = json.loads(data)
                leak = leak or info["frames"] != 10 or not info["path"].startswith(root + "/")
            elif ep == "plan":
                leak = leak or json.loads(data)["video_sha256"] != inside
            else:
                leak = leak or r.getheader("X-Framesweep-Source-Sha256") != inside
        with lock:
            stats["requests"] += 1
            stats["ok" if r.status == 200 else "refused"] += 1
            if leak:
                leaks.append("%s %s: %d %.200s" % (ep, name, r.status, data))
t = threading.Thread(target=swapper)
t.start()
cs = [threading.Thread(target=client, args=(c,)) for c in range(4)]
for c in cs: c.start()
for c in cs: c.join()
stop.set()
t.join()
print(json.dumps({"swaps": swaps[0], "leaks": len(leaks), "first": leaks[:1], **stats}))
PY
) || res='{"error": "the client failed"}'
  serve_stop
  python3 -c '
import json, sys
r = json.loads(sys.argv[1]); label = sys.argv[2]
ok = "error" not in r and r["leaks"] == 0 and r["ok"] > 0 and r["swaps"] >= 1000
print(("ok" if ok else "fail") + " " + label + ": %s" % r)' "$res" "swap${*:+ $*}"
}

# --- rebind / form: what a web page can make a browser send ----------------------------------------
browser() {
  local root=$VIDEOS
  serve_start "$work/browser" --root "$root"
  python3 - "$URL" <<'PY'
import http.client, json, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
body = json.dumps({"video": "h265_video.mp4", "policy": "uniform", "frames": 2, "resolution": "32x32"})
def send(method, path, headers, body=None):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.putrequest(method, path, skip_host=True)
    for k, v in headers.items():
        c.putheader(k, v)
    if body is not None:
        c.putheader("Content-Length", str(len(body)))
    c.endheaders(body.encode() if body is not None else None)
    r = c.getresponse()
    r.read()
    return r.status
own = "127.0.0.1:%d" % u.port
rebind, form = [], []
for h in ["evil.example:%d" % u.port, "127.0.0.1.nip.io:%d" % u.port, "localhost.evil.example", "0.0.0.0:%d" % u.port]:
    for m, p, b in [("GET", "/v1/health", None), ("GET", "/v1/probe?video=h265_video.mp4", None), ("POST", "/v1/frames", body)]:
        hd = {"Host": h, "Content-Type": "application/json"}
        s = send(m, p, hd, b)
        if 200 <= s < 300:
            rebind.append("%s %s Host %s: %d" % (m, p, h, s))
for name, hd in [("text/plain", {"Content-Type": "text/plain"}),
                 ("urlencoded", {"Content-Type": "application/x-www-form-urlencoded"}),
                 ("multipart", {"Content-Type": "multipart/form-data; boundary=x"}),
                 ("no type", {}),
                 ("foreign origin", {"Content-Type": "application/json", "Origin": "http://evil.example"}),
                 ("cross-site", {"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"})]:
    hd = dict(hd, Host=own)
    s = send("POST", "/v1/frames", hd, body)
    if 200 <= s < 300:
        form.append("%s: %d" % (name, s))
good = send("POST", "/v1/frames", {"Host": own, "Content-Type": "application/json"}, body)
print(("ok" if not rebind and good == 200 else "fail") + " rebind: %d accepted %s (own Host: %d)" % (len(rebind), rebind[:2], good))
print(("ok" if not form else "fail") + " form: %d accepted %s" % (len(form), form[:2]))
PY
  serve_stop
}

# --- token: --token-file that blocks or never ends ------------------------------------------------
token() {
  local d=$work/token
  mkdir -p "$d"
  mkfifo "$d/fifo"
  ln -s /dev/zero "$d/zero-link"
  local bad=()
  for f in "$d/fifo" /dev/zero "$d/zero-link"; do
    "$BIN" serve --root "$d" --addr 127.0.0.1:0 --token-file "$f" >/dev/null 2>"$d/err" &
    local p=$! why="" n=0
    pids+=("$p")
    while kill -0 "$p" 2>/dev/null; do
      rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
      if [ "${rss:-0}" -gt $((512 << 10)) ]; then why="${rss} kB of RSS"; fi
      if [ "$n" -ge 100 ]; then why="still running after 10 s"; fi
      if [ -n "$why" ]; then kill -9 "$p" 2>/dev/null; break; fi
      n=$((n + 1))
      sleep 0.1
    done
    local code=0
    wait "$p" 2>/dev/null || code=$?
    if [ -n "$why" ]; then
      bad+=("$f: $why")
    elif [ "$code" != 1 ] || [ "$(wc -l <"$d/err")" != 1 ] || ! grep -qF -- "$f" "$d/err"; then
      bad+=("$f: exit $code, stderr $(head -c 200 "$d/err")")
    fi
  done
  if [ ${#bad[@]} -eq 0 ]; then echo "ok token: FIFO, /dev/zero and a link to it refused at once"; else echo "fail token: ${bad[*]}"; fi
}

# --- memory: large objects, peak and idle RSS against the stated bound -----------------------------
memory() {
  local n=${CAMPAIGN_MEM_REQUESTS:-$([ $short = 1 ] && echo 8 || echo 16)}
  local frames=${CAMPAIGN_MEM_FRAMES:-$([ $short = 1 ] && echo 16 || echo 32)}
  local size=${CAMPAIGN_MEM_SIZE:-1024x1024} maxmb=${CAMPAIGN_MEM_MAX_MB:-100} lrumb=128 inflight=4
  serve_start "$work/memory" --root "$VIDEOS" --max-inflight $inflight --max-response-mb "$maxmb" --lru-mb $lrumb
  python3 - "$URL" "$SPID" "$n" "$frames" "$size" "$inflight" "$lrumb" <<'PY'
import http.client, json, sys, threading, time, urllib.parse
url, pid, n, frames, size, inflight, lrumb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], int(sys.argv[6]), int(sys.argv[7])
u = urllib.parse.urlsplit(url)
def status(field):
    for l in open("/proc/%d/status" % pid):
        if l.startswith(field + ":"):
            return int(l.split()[1]) << 10
base = status("VmRSS")
w, h = map(int, size.split("x"))
largest, errors, lock, sem = [0], [], threading.Lock(), threading.Semaphore(inflight)
def one(i):
    try:
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
        body = json.dumps({"video": "nasa_13013.mp4", "policy": "uniform", "frames": frames, "resolution": "%dx%d" % (w - 16 * i, h)})
        c.request("POST", "/v1/frames", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        got = len(r.read())
        with lock:
            if r.status != 200:
                errors.append(r.status)
            largest[0] = max(largest[0], got)
    finally:
        sem.release()
ts = []
for i in range(n):
    sem.acquire()
    t = threading.Thread(target=one, args=(i,))
    t.start()
    ts.append(t)
for t in ts: t.join()
peak = status("VmHWM")
L, lru = largest[0], lrumb << 20
peak_bound = base + (inflight * L + lru) * 5 // 4 + inflight * (64 << 20)
idle_bound = base + lru + (128 << 20)
# idle: read until two samples 200 ms apart agree within 2 MiB (or 5 s pass)
deadline, idle = time.time() + 5, status("VmRSS")
while time.time() < deadline:
    time.sleep(0.2)
    prev, idle = idle, status("VmRSS")
    if abs(idle - prev) <= 2 << 20:
        break
ok = not errors and peak <= peak_bound and idle <= idle_bound
M = 1 << 20
print(("ok" if ok else "fail") + " memory: %d objects of up to %d MiB, %d at a time: RSS start %d MiB, peak %d MiB (bound %d), idle %d MiB (bound %d)%s" % (
    n, L // M, inflight, base // M, peak // M, peak_bound // M, idle // M, idle_bound // M, " errors %s" % errors if errors else ""))
PY
  serve_stop
}

run() { # class function args…
  local class=$1
  shift
  local out
  out=$("$@" 2>&1) || true
  while IFS= read -r line; do
    case $line in
      ok\ *) l=${line#ok }; report "${l%%:*}" ok "${l#*: }" ;;
      fail\ *) l=${line#fail }; report "${l%%:*}" fail "${l#*: }" ;;
      *) [ -n "$line" ] && echo "serve/$class: $line" ;;
    esac
  done <<<"$out"
  if ! grep -q '^ok \|^fail ' <<<"$out"; then report "$class" fail "no verdict"; fi
}

t0=$(date +%s)
if want swap && [ $short = 1 ]; then
  run swap swap 2 0
elif want swap; then
  run swap swap 8 0
  run swap swap 6 1 --worker
fi
if want browser; then run browser browser; fi
if want token; then run token token; fi
if want memory; then run memory memory; fi
echo "serve: $(($(date +%s) - t0)) s, ${#failed[@]} class(es) failed${failed[*]:+: ${failed[*]}}"
[ ${#failed[@]} -eq 0 ]
