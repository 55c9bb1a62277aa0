"""Run by cmd/framesweep's TestServeBinary/records: a sweep's records ($FRAMESWEEP_RUN, videos named
relative to the root $FRAMESWEEP_URL serves) given back by reproduce_record (the CLI,
$FRAMESWEEP_BIN) and Client.record_frames (the server), each checked against input_sha256; a text-only
record is skipped by reproduce_record (a warning) and refused by record_request; a tampered record, a
missing binary (FramesweepError "no_binary") and a video named relative to another root (the 403 names
--video-root) are refused; an fps-mode record names no budget. Prints a JSON summary."""

import copy
import json
import os
import sys
import warnings

from framesweep_client import Client, FramesweepError, record_request, reproduce_record, sha256_of


def check(cond, msg):
    if not cond:
        print("FAIL: " + msg, file=sys.stderr)
        sys.exit(1)


def main():
    run = os.environ["FRAMESWEEP_RUN"]
    recs = [json.loads(l) for l in open(os.path.join(run, "records.jsonl")) if l.strip()]
    c = Client(os.environ["FRAMESWEEP_URL"])
    out = {"cli": 0, "serve": 0, "refused": [], "skipped": []}
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
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frames, info = reproduce_record(run, text["item_id"], "text-only")
    check(frames is None and info["text_only"] and "text-only record" in info["skipped"] and "no input" in info["skipped"], "text-only: %r" % (info,))
    check(len(caught) == 1 and issubclass(caught[0].category, RuntimeWarning) and str(caught[0].message) == info["skipped"], "text-only warning: %r" % caught)
    out["skipped"].append("cli text-only")
    # The binary missing: a FramesweepError naming what to do, not a FileNotFoundError.
    r0 = next(r for r in recs if r["config"] != "text-only")
    for kw, env in (({"binary": os.path.join(run, "no-such-framesweep")}, None), ({}, os.path.join(run, "no-such-framesweep"))):
        saved = os.environ.get("FRAMESWEEP_BIN")
        if env is not None:
            os.environ["FRAMESWEEP_BIN"] = env
        try:
            reproduce_record(run, r0["item_id"], r0["config"], **kw)
            check(False, "a missing binary ran")
        except FramesweepError as e:
            check(e.code == "no_binary" and e.status == 127 and "FRAMESWEEP_BIN" in e.message and "no-such-framesweep" in e.message, "no binary: %r" % e)
        finally:
            if saved is not None:
                os.environ["FRAMESWEEP_BIN"] = saved
    out["refused"].append("no binary")
    # A record whose video is relative to another root than the server's: the 403 names --video-root.
    away = copy.deepcopy(r0)
    away["video"] = "../" + os.path.basename(away["video"])
    try:
        c.record_frames(away)
        check(False, "a video outside the served root was served")
    except FramesweepError as e:
        check(e.status == 403 and e.code == "forbidden" and "--video-root" in e.message and "video root" in e.message, "video root: %r" % e)
        out["refused"].append("video root")
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
