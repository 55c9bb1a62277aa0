"""Run by cmd/framesweep's TestFramesRecordsBatch: every record of a sweep ($FRAMESWEEP_RUN) given back
by reproduce_records through one framesweep process ($FRAMESWEEP_BIN), each checked against its
input_sha256, each in its own subdirectory of out=; text-only records skipped with a warning each; a
RUN whose one record was tampered with raises FramesweepError "mismatch" naming it, with the other
records' frames in .results. Prints a JSON summary."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import framesweep_client.records as records
from framesweep_client import FramesweepError, reproduce_records, sha256_of


def check(cond, msg):
    if not cond:
        print("FAIL: " + msg, file=sys.stderr)
        sys.exit(1)


def main():
    run = os.environ["FRAMESWEEP_RUN"]
    recs = [json.loads(l) for l in open(os.path.join(run, "records.jsonl")) if l.strip()]
    calls = []
    real_run = subprocess.run

    def counting_run(*a, **kw):
        calls.append(a[0])
        return real_run(*a, **kw)

    records.subprocess.run = counting_run
    out = {"records": len(recs), "matched": 0, "skipped": 0}
    with tempfile.TemporaryDirectory() as tmp:
        dest = os.path.join(tmp, "out")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = reproduce_records(run, recs, out=dest)
        check(len(got) == len(recs), "%d results for %d records" % (len(got), len(recs)))
        dirs = set()
        for r, (frames, info) in zip(recs, got):
            if r["config"] == "text-only":
                check(frames is None and info["text_only"] and "no input" in info["skipped"], "text-only: %r" % (info,))
                out["skipped"] += 1
                continue
            check(info["match"] and sha256_of(frames) == r["input_sha256"] and info["item_id"] == r["item_id"], "%s/%s: %r" % (r["item_id"], r["config"], info))
            check(os.path.dirname(info["tensor"]) == info["out"] and os.path.dirname(info["out"]) == dest and os.path.isfile(info["tensor"]), "out: %r" % info["out"])
            dirs.add(info["out"])
            out["matched"] += 1
        check(len(dirs) == out["matched"], "%d subdirectories for %d inputs" % (len(dirs), out["matched"]))
        check(len(caught) == out["skipped"] and all(issubclass(w.category, RuntimeWarning) for w in caught), "warnings: %r" % caught)
    out["calls"] = len(calls)
    check(len(calls) == 1 and calls[0][1:5] == ["frames", "--record", run, "--records"], "processes: %r" % calls)
    # One record tampered with: the others still come back, in .results.
    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, "run")
        os.makedirs(bad)
        shutil.copy(os.path.join(run, "run.json"), bad)
        visual, shas = [], set()
        for r in recs:
            if r["config"] != "text-only" and r["input_sha256"] not in shas and len(visual) < 3:
                visual.append(r)
                shas.add(r["input_sha256"])
        with open(os.path.join(bad, "records.jsonl"), "w") as f:
            for r in recs:
                if (r["item_id"], r["config"]) == (visual[1]["item_id"], visual[1]["config"]):
                    r = dict(r, input_sha256="0" * 64)
                f.write(json.dumps(r) + "\n")
        try:
            reproduce_records(bad, [(r["item_id"], r["config"]) for r in visual])
            check(False, "a tampered record passed")
        except FramesweepError as e:
            res = e.results
            check(e.code == "mismatch" and visual[1]["item_id"] in e.message and len(res) == 3, "tampered: %r" % e)
            check(res[1][0] is None and res[1][1]["status"] == "mismatch", "tampered entry: %r" % (res[1],))
            check(all(sha256_of(res[i][0]) == visual[i]["input_sha256"] for i in (0, 2)), "the others")
            out["mismatch"] = 1
    print(json.dumps(out))


if __name__ == "__main__":
    main()
