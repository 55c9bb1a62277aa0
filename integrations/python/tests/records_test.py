"""Run by cmd/framesweep's TestServeBinary/records: a sweep's records ($FRAMESWEEP_RUN, videos named
relative to the root $FRAMESWEEP_URL serves) given back by reproduce_record (the CLI,
$FRAMESWEEP_BIN) and Client.record_frames (the server), each checked against input_sha256; a text-only
record, an fps-mode one without sample_fps and a tampered one are refused. Prints a JSON summary."""

import copy
import json
import os
import sys

from framesweep_client import Client, FramesweepError, record_request, reproduce_record, sha256_of


def check(cond, msg):
    if not cond:
        print("FAIL: " + msg, file=sys.stderr)
        sys.exit(1)


def main():
    run = os.environ["FRAMESWEEP_RUN"]
    recs = [json.loads(l) for l in open(os.path.join(run, "records.jsonl")) if l.strip()]
    c = Client(os.environ["FRAMESWEEP_URL"])
    out = {"cli": 0, "serve": 0, "refused": []}
    seen = set()
    for r in recs:
        if r["config"] == "text-only" or (r["video"], r["config"]) in seen:
            continue
        seen.add((r["video"], r["config"]))
        frames, info = reproduce_record(run, r["item_id"], r["config"])
        check(info["match"] and sha256_of(frames) == r["input_sha256"], "CLI %s/%s: %r" % (r["item_id"], r["config"], info))
        out["cli"] += 1
        arr, meta = c.record_frames(r)
        check(sha256_of(arr) == r["input_sha256"] and meta["indices"] == r["config_meta"]["indices"], "serve %s/%s" % (r["item_id"], r["config"]))
        out["serve"] += 1
    text = next(r for r in recs if r["config"] == "text-only")
    try:
        record_request(text)
        check(False, "a text-only record mapped to a request")
    except ValueError:
        out["refused"].append("text-only")
    try:
        reproduce_record(run, text["item_id"], "text-only")
        check(False, "a text-only record reproduced")
    except FramesweepError as e:
        check(e.code == "failed" and "no input" in e.message, "text-only: %r" % e)
        out["refused"].append("cli text-only")
    r = next(r for r in recs if r["config"] != "text-only")
    bad = copy.deepcopy(r)
    bad["input_sha256"] = "0" * 64
    try:
        c.record_frames(bad)
        check(False, "a tampered record passed")
    except FramesweepError as e:
        check(e.code == "mismatch", "tampered: %r" % e)
        out["refused"].append("tampered")
    fps = copy.deepcopy(r)
    del fps["config_meta"]["frames"]
    check("frames" not in record_request(fps), "an fps-mode record named a budget")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
