"""Run by cmd/framesweep's TestServePython against a real `framesweep serve`: fetch every case of
$FRAMESWEEP_EXPECT with the client (safetensors and npy), check it against what `framesweep extract`
wrote for that configuration (computed by the Go test), check the error mapping, print a JSON summary."""

import json
import os
import sys

import numpy as np

from framesweep_client import Client, FramesweepError, load_safetensors, sha256_of


def check(cond, msg):
    if not cond:
        print("FAIL: " + msg, file=sys.stderr)
        sys.exit(1)


def main():
    exp = json.load(open(os.environ["FRAMESWEEP_EXPECT"]))
    c = Client(os.environ["FRAMESWEEP_URL"], token_file=os.environ.get("FRAMESWEEP_TOKEN_FILE"))
    h = c.health()
    check(h["status"] == "ok", "health %r" % h)
    out = {"cases": [], "errors": {}}
    for case in exp["cases"]:
        req = dict(case["request"])
        video = req.pop("video")
        arr, meta = c.frames(video, **req)
        npy, nmeta = c.frames(video, format="npy", **req)
        obj, headers = c.object(video, **req)
        tensors, raw = load_safetensors(obj)
        plan = c.plan(video, **req)
        got = {"key": meta["key"], "sha256": sha256_of(arr), "npy_sha256": sha256_of(npy), "shape": list(arr.shape),
               "dtype": str(arr.dtype), "indices": meta["indices"], "plan_key": plan["key"], "plan_indices": plan["indices"],
               "object_key": raw["key"], "served": [meta["served"], nmeta["served"]]}
        check(got["key"] == case["key"] and got["plan_key"] == case["key"] and nmeta["key"] == case["key"], "key %r vs %r" % (got, case["key"]))
        check(got["sha256"] == case["frames_sha256"] == got["npy_sha256"], "frames digest %r vs %r" % (got, case["frames_sha256"]))
        check(got["shape"] == case["shape"] and got["indices"] == case["indices"] == plan["indices"], "shape/indices %r vs %r" % (got, case))
        check(np.array_equal(arr, npy) and np.array_equal(tensors["frames"], arr) and tensors["indices"].tolist() == case["indices"], "arrays differ")
        check(arr.flags.writeable, "frames array not writable")
        out["cases"].append(got)
    bad = exp["bad"]
    for name, (video, cfg, status) in bad.items():
        try:
            c.frames(video, **cfg)
            check(False, "%s: no error" % name)
        except FramesweepError as e:
            check(e.status == status, "%s: status %d (%s), want %d" % (name, e.status, e.message, status))
            out["errors"][name] = [e.status, e.code]
    try:
        c.frames("a.mp4", policy="uniform", frame=3)
        check(False, "unknown field accepted")
    except TypeError:
        out["errors"]["unknown field"] = "TypeError"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
