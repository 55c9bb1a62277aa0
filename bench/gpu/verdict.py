"""Decisions of bench/gpu/run.sh, kept out of bash so they can be tested without a GPU.

  verdict.py decode ROWS.json NAME EXPECT SOURCE PSNR_MIN
      ROWS.json is `framesweep bench decode --hwaccel cuda --json` output; EXPECT is what the device said
      in a trial decode ("gpu" or "cpu"), SOURCE how that was learned. Prints one line
      "ok|WARN|FAIL NAME: ..." and exits 1 only on FAIL: a failed check row, a frame count that differs
      from the CPU pass, or (when framesweep decoded on the GPU) a PSNR against the CPU below PSNR_MIN.
      Whether framesweep used the GPU where the device can decode (or not) is recorded, and reported as
      WARN when it disagrees with the trial, never as a failure.
  verdict.py streams HW N WALL_S FRAMES_PER_STREAM OUT1.json ...
      One line for N parallel `framesweep frames --hwaccel HW` processes: aggregate decoded frames/s, each
      stream's latency (OUTi.json.wall, seconds, when present: median and max), and how many of them
      really decoded on the device (stats.hwaccel), with the first fallback reason.
  verdict.py llama GPU.json CPU.json TOL
      The tiny model asked the same question in process on CUDA and on the CPU (`framesweep ask --json`
      with device=cuda0 and device=cpu): FAIL when the choice differs, when an option's probability differs
      by more than TOL, or when the GPU answer's runtime_backend does not name a CUDA device; otherwise
      "ok" with each side's tokens/s (completion_tokens / latency_s).
  verdict.py self-test
      Runs the decode and llama decisions on synthetic inputs for outcomes a CPU-only host cannot produce.
"""
import json
import sys


def metrics(row):
    return {m["name"]: m["value"] for m in row.get("metrics", [])}


def decode_verdict(rows, name, expect, source, psnr_min):
    chk = next((r for r in rows if "/check=hwaccel-vs-cpu/" in r["name"]), None)
    if chk is None:
        return "FAIL", "FAIL %s: no check=hwaccel-vs-cpu row in the bench output" % name
    m = metrics(chk)
    hw = next((r for r in rows if r["name"].endswith("/variant=decode/hwaccel=cuda")), None)
    cpu = next((r for r in rows if r["name"].endswith("/variant=decode/hwaccel=none")), None)
    speed = cpu["seconds"] / hw["seconds"] if hw and cpu and hw["seconds"] else 0.0
    used = "gpu" if m.get("hw-used") == 1 else "cpu"
    note = chk.get("note", "")
    problems, warnings = [], []
    if chk.get("failure"):
        problems.append(chk["failure"])
    if m.get("frames-hw") != m.get("frames-cpu"):
        problems.append("frame count cuda %s != cpu %s" % (m.get("frames-hw"), m.get("frames-cpu")))
    if used == "gpu" and m.get("psnr-min-dB", 0) < psnr_min:
        problems.append("PSNR min %.2f dB < %g against the CPU" % (m.get("psnr-min-dB", 0), psnr_min))
    if expect == "gpu" and used == "cpu":
        warnings.append("the device decodes this stream (%s) but framesweep used the CPU [%s]" % (source, note))
    if expect == "cpu" and used == "gpu":
        warnings.append("framesweep decoded on the device although the trial did not (%s)" % source)
    status = "FAIL" if problems else ("WARN" if warnings else "ok")
    line = "%s %s: expected=%s (%s) used=%s frames=%d psnr_min=%.2f psnr_mean=%.2f cuda/cpu speed=%.2fx [%s]" % (
        status, name, expect, source, used, m.get("frames-cpu", 0), m.get("psnr-min-dB", 0),
        m.get("psnr-mean-dB", 0), speed, note)
    if problems or warnings:
        line += ": " + "; ".join(problems + warnings)
    return status, line


def streams_line(hw, n, wall, frames, outs):
    on_dev, reasons, walls = 0, [], []
    for p in outs:
        try:
            st = json.load(open(p))["stats"]
        except (OSError, ValueError, KeyError) as e:
            return "FAIL", "FAIL streams hw=%s n=%d: unreadable output %s: %s" % (hw, n, p, e)
        if st.get("hwaccel") not in (None, "", "none"):
            on_dev += 1
        elif st.get("hwaccel_fallback"):
            reasons.append(st["hwaccel_fallback"])
        try:
            walls.append(float(open(p + ".wall").read()))
        except (OSError, ValueError):
            pass
    line = "streams hw=%s n=%d: %.2f s wall, %.0f frames/s aggregate, %d/%d on the device" % (
        hw, n, wall, n * frames / wall if wall > 0 else 0, on_dev, n)
    if walls:
        walls.sort()
        line += ", latency per stream median %.2f s, max %.2f s" % (walls[len(walls) // 2], walls[-1])
    if reasons:
        line += " (fallback: %s)" % reasons[0]
    return "ok", line


def llama_verdict(gpu, cpu, tol):
    problems = []
    if "CUDA" not in gpu.get("runtime_backend", ""):
        problems.append("the GPU answer ran on %r, not a CUDA device" % gpu.get("runtime_backend", ""))
    if gpu.get("choice") != cpu.get("choice"):
        problems.append("choice %r on CUDA, %r on the CPU" % (gpu.get("choice"), cpu.get("choice")))
    gp, cp = gpu.get("probs") or {}, cpu.get("probs") or {}
    if set(gp) != set(cp) or not gp:
        problems.append("options %s on CUDA, %s on the CPU" % (sorted(gp), sorted(cp)))
    diff = max([abs(gp[k] - cp[k]) for k in gp if k in cp] or [0.0])
    if diff > tol:
        problems.append("probabilities differ by %.4f > %g" % (diff, tol))

    def tps(r):
        return r.get("completion_tokens", 0) / r["latency_s"] if r.get("latency_s") else 0.0
    line = "%s llama.cpp in process: choice cuda=%s cpu=%s, max |Δp| %.4f (tolerance %g), %.1f tokens/s on CUDA, %.1f on the CPU [%s]" % (
        "FAIL" if problems else "ok", gpu.get("choice"), cpu.get("choice"), diff, tol, tps(gpu), tps(cpu),
        gpu.get("runtime_backend", ""))
    if problems:
        line += ": " + "; ".join(problems)
    return ("FAIL" if problems else "ok"), line


def self_test():
    def rows(hw_used, frames_hw=100, frames_cpu=100, psnr=48.0, failure=None, note="device=cuda"):
        chk = {"name": "Decode/video=x/check=hwaccel-vs-cpu/hwaccel=cuda", "note": note,
               "metrics": [{"name": "hw-used", "value": hw_used}, {"name": "frames-hw", "value": frames_hw},
                           {"name": "frames-cpu", "value": frames_cpu}, {"name": "psnr-min-dB", "value": psnr},
                           {"name": "psnr-mean-dB", "value": psnr}]}
        if failure:
            chk["failure"] = failure
        return [{"name": "Decode/video=x/variant=decode/hwaccel=cuda", "seconds": 1.0},
                {"name": "Decode/video=x/variant=decode/hwaccel=none", "seconds": 3.0}, chk]
    cases = [
        ("GPU decodes, matches the CPU", rows(1), "gpu", "ok"),
        ("AV1 on Hopper: the trial decodes on the device, framesweep falls back", rows(0, psnr=100, note="fallback: cuda: no AV1"), "gpu", "WARN"),
        ("no device: both on the CPU", rows(0, psnr=100), "cpu", "ok"),
        ("framesweep on the GPU where the trial was not", rows(1), "cpu", "WARN"),
        ("frame count differs", rows(1, frames_hw=99), "gpu", "FAIL"),
        ("PSNR too low", rows(1, psnr=20.0), "gpu", "FAIL"),
        ("low PSNR does not matter on the CPU path", rows(0, psnr=20.0), "cpu", "ok"),
        ("check row failed", rows(1, failure="read: boom"), "gpu", "FAIL"),
    ]
    bad = 0
    for what, r, expect, want in cases:
        got, line = decode_verdict(r, "case", expect, "self-test", 35)
        if got != want:
            bad += 1
            print("verdict self-test: %s: got %s, want %s: %s" % (what, got, want, line))
    if decode_verdict([], "case", "gpu", "self-test", 35)[0] != "FAIL":
        bad += 1
        print("verdict self-test: missing check row did not fail")
    def ans(choice, a, backend="llama.cpp v0.4.0; CUDA0 (NVIDIA H200), all layers; CPU libggml-cpu-zen4.so"):
        return {"choice": choice, "probs": {"A": a, "B": 1 - a}, "completion_tokens": 32, "latency_s": 0.5,
                "runtime_backend": backend}
    cpu = ans("A", 0.80, "llama.cpp v0.4.0; CPU libggml-cpu-zen4.so")
    llama_cases = [
        ("same choice, close probabilities", ans("A", 0.805), "ok"),
        ("choice differs", ans("B", 0.45), "FAIL"),
        ("probabilities too far apart", ans("A", 0.70), "FAIL"),
        ("ran on the CPU although asked for CUDA", ans("A", 0.80, cpu["runtime_backend"]), "FAIL"),
    ]
    for what, g, want in llama_cases:
        got, line = llama_verdict(g, cpu, 0.02)
        if got != want:
            bad += 1
            print("verdict self-test: llama: %s: got %s, want %s: %s" % (what, got, want, line))
    print("verdict self-test: %d cases, %d wrong" % (len(cases) + 1 + len(llama_cases), bad))
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "self-test":
        return self_test()
    if len(argv) == 7 and argv[1] == "decode":
        try:
            rows = json.load(open(argv[2]))
        except (OSError, ValueError) as e:
            print("FAIL %s: cannot read %s: %s" % (argv[3], argv[2], e))
            return 1
        status, line = decode_verdict(rows, argv[3], argv[4], argv[5], float(argv[6]))
        print(line)
        return 1 if status == "FAIL" else 0
    if len(argv) == 5 and argv[1] == "llama":
        try:
            gpu, cpu = json.load(open(argv[2])), json.load(open(argv[3]))
        except (OSError, ValueError) as e:
            print("FAIL llama.cpp in process: cannot read the answers: %s" % e)
            return 1
        status, line = llama_verdict(gpu, cpu, float(argv[4]))
        print(line)
        return 1 if status == "FAIL" else 0
    if len(argv) >= 7 and argv[1] == "streams":
        status, line = streams_line(argv[2], int(argv[3]), float(argv[4]), int(argv[5]), argv[6:])
        print(line)
        return 1 if status == "FAIL" else 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
