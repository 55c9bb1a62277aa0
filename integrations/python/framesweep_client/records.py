"""A sweep record's input, again: exactly the frames its model was fed, checked against the record.

    from framesweep_client import Client, reproduce_record, reproduce_records, record_request
    frames, info = reproduce_record("RUN", "item-1", "f16-qwen2.5-vl-qwen2.5-vl-raw")  # the CLI
    results = reproduce_records("RUN", records)           # many records, one CLI process
    frames, meta = Client(url).record_frames(record)                                 # a server

Through the CLI (`framesweep frames --record RUN ITEM CONFIG`) any record of a framesweep sweep is
rebuilt from its own provenance; reproduce_records gives many at once from one process
(`framesweep frames --record RUN --records -`). Through `framesweep serve`, record_request() maps the record's fields
to a /v1/frames request (docs/serve.md, "A record's input") and Client.record_frames() checks the
served frames against the record's indices and input_sha256.
"""

import glob
import json
import os
import subprocess
import tempfile
import warnings

import numpy as np

from .client import FramesweepError, sha256_of

__all__ = ["record_request", "reproduce_record", "reproduce_records", "check_record"]


def record_request(record, video=None):
    """The /v1/frames request fields naming a sweep record's input, as a dict with "video".

    record: one line of RUN/records.jsonl (a dict). video: the name to ask the server for (default
    the record's "video", which is relative to the RUN's video root: run the server with that root).
    Raises ValueError when the record does not name its input completely: a text-only or failed
    record (no input), or an fps-mode config (its sample_fps is not in the record: pass
    sample_fps=… to Client.record_frames). The grid's options: block (torch, force_last, min/max
    frames) and run.json's rotation and damaged-frame policy are not in a record either: give them to
    record_frames when the grid set them; the check against input_sha256 catches what differs."""
    meta = record.get("config_meta") or {}
    if not record.get("input_sha256") or not meta.get("indices"):
        raise ValueError("record %s/%s has no input (a text-only config, or an error before its input was built)"
                         % (record.get("item_id"), record.get("config")))
    body = {"video": video if video is not None else record["video"]}
    if meta.get("loader"):
        body["loader"] = meta["loader"]
    elif meta.get("preset"):
        body["preset"] = meta["preset"]
    else:
        body["policy"] = meta.get("policy")
    if meta.get("frames"):
        body["frames"] = meta["frames"]
    if meta.get("seed") is not None:
        body["seed"] = meta["seed"]
    if not meta.get("loader"):
        body["resolution"] = record.get("geometry") or None
        body["pipeline"] = meta.get("pipeline") or "raw"
        body["kernel"] = record.get("kernel") or None
        if record.get("stream_index") is not None:
            body["stream"] = record["stream_index"]
    return {k: v for k, v in body.items() if v is not None}


def check_record(record, frames, indices):
    """Raises FramesweepError (code "mismatch") unless frames and indices are the record's input."""
    want = (record.get("config_meta") or {}).get("indices")
    if list(indices) != list(want):
        raise FramesweepError(200, "mismatch", "indices %s, the record's %s" % (list(indices), want))
    got = sha256_of(frames)
    if got != record["input_sha256"]:
        raise FramesweepError(200, "mismatch", "input sha256 %s, the record's %s" % (got, record["input_sha256"]))


def reproduce_record(run, item, config, out=None, binary="framesweep", video_root=None):
    """`framesweep frames --record RUN ITEM CONFIG --out OUT` → (frames, info).

    frames: the rebuilt input tensor (uint8, [N, H, W, 3] or [N, images, H, W, 3]) read from
    OUT/input.npy; info: the command's JSON (input_sha256, record_input_sha256, match, video,
    indices, geometry, kernel, pipeline, written PNGs…). OUT defaults to a temporary directory (removed
    after reading). A text-only record has no input: it is skipped, with a RuntimeWarning, and the
    result is (None, {"skipped": why, "item_id", "config", "text_only": True}), so that a loop over a
    RUN's records can pass it by. Raises FramesweepError: code "mismatch" when the rebuilt input differs
    from the record's, "no_binary" (status 127) when the framesweep binary is not found, "failed" when
    the command could not rebuild it (its message)."""
    binary = os.environ.get("FRAMESWEEP_BIN", binary) if binary == "framesweep" else binary
    with tempfile.TemporaryDirectory(prefix="framesweep-record-") as tmp:
        dest = os.fspath(out) if out is not None else tmp
        cmd = [binary, "frames", "--record", os.fspath(run), item, config, "--out", dest]
        if video_root is not None:
            cmd += ["--video-root", os.fspath(video_root)]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except OSError as e:
            raise FramesweepError(127, "no_binary", "cannot run %r (%s): put framesweep on PATH, set $FRAMESWEEP_BIN or pass binary=" % (binary, e.strerror or e)) from None
        info = json.loads(p.stdout) if p.stdout.strip() else None
        if p.returncode != 0:
            if info is not None and info.get("match") is False:
                raise FramesweepError(200, "mismatch", p.stderr.strip())
            if _text_only(run, item, config):
                why = "%s/%s is a text-only record: the model saw no frames, there is no input to reproduce (skipped)" % (item, config)
                warnings.warn(why, RuntimeWarning, stacklevel=2)
                return None, {"skipped": why, "item_id": item, "config": config, "text_only": True}
            raise FramesweepError(p.returncode, "failed", p.stderr.strip())
        frames = np.load(info["tensor"])
    check_record({"input_sha256": info["record_input_sha256"], "config_meta": {"indices": info["indices"]}}, frames, info["indices"])
    return frames, info


def reproduce_records(run, records, out=None, binary="framesweep", video_root=None):
    """`framesweep frames --record RUN --records - --out OUT`, one process for every record → a list
    of (frames, info), one per record, in order.

    records: (item, config) pairs, or record dicts (lines of RUN/records.jsonl: their item_id and
    config are what is sent). frames: the record's rebuilt uint8 tensor (OUT/NNNNNN/input.npy, the
    subdirectory of its position from 000001), checked against its input_sha256 and indices as
    reproduce_record checks it; info: the record's entry in the command's JSON (status, input_sha256,
    record_input_sha256, match, video, indices, out, tensor, written PNGs…). OUT defaults to a
    temporary directory (removed after reading); a given OUT must be empty or hold only those
    subdirectories. A record with no input to rebuild (text-only, a loader's frames) gives (None,
    {"skipped": why, "item_id", "config", "text_only"}) with a RuntimeWarning, as in reproduce_record.
    Every record is rebuilt whatever happens to the others; then FramesweepError is raised when one
    could not be: code "mismatch" when a rebuilt input differs from its record's, else "failed" (its
    message names each), with .results the list (None frames for those); "no_binary" (status 127)
    when the binary is not found."""
    binary = os.environ.get("FRAMESWEEP_BIN", binary) if binary == "framesweep" else binary
    pairs = [(r["item_id"], r["config"]) if isinstance(r, dict) else tuple(r) for r in records]
    if not pairs:
        return []
    lines = "".join(json.dumps({"item_id": i, "config": c}) + "\n" for i, c in pairs)
    with tempfile.TemporaryDirectory(prefix="framesweep-records-") as tmp:
        dest = os.fspath(out) if out is not None else tmp
        cmd = [binary, "frames", "--record", os.fspath(run), "--records", "-", "--out", dest]
        if video_root is not None:
            cmd += ["--video-root", os.fspath(video_root)]
        try:
            p = subprocess.run(cmd, input=lines, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except OSError as e:
            raise FramesweepError(127, "no_binary", "cannot run %r (%s): put framesweep on PATH, set $FRAMESWEEP_BIN or pass binary=" % (binary, e.strerror or e)) from None
        res = json.loads(p.stdout) if p.stdout.strip() else None
        if res is None:
            raise FramesweepError(p.returncode, "failed", p.stderr.strip())
        results, bad = [], []
        for (item, config), e in zip(pairs, res["records"]):
            if e["status"] == "skipped":
                text_only = _text_only(run, item, config)
                why = ("%s/%s is a text-only record: the model saw no frames, there is no input to reproduce (skipped)" % (item, config)
                       if text_only else e["error"] + " (skipped)")
                warnings.warn(why, RuntimeWarning, stacklevel=2)
                results.append((None, {"skipped": why, "item_id": item, "config": config, "text_only": text_only}))
            elif e["status"] == "match":
                frames = np.load(e["tensor"])
                check_record({"input_sha256": e["record_input_sha256"], "config_meta": {"indices": e["indices"]}}, frames, e["indices"])
                results.append((frames, e))
            else:
                bad.append(e)
                results.append((None, e))
    if bad:
        code = "mismatch" if any(e["status"] == "mismatch" for e in bad) else "failed"
        err = FramesweepError(200 if code == "mismatch" else p.returncode, code,
                              "%d of %d records: %s" % (len(bad), len(pairs), "; ".join(e["error"] for e in bad)))
        err.results = results
        raise err
    return results


def _text_only(run, item, config):
    """Whether a local RUN's record of (item, config) is a text-only one (config_meta.text_only), read
    from its records.jsonl and its records/ chunks; False when the RUN is not a local directory or holds
    no such record (the command's own error then stands)."""
    run = os.fspath(run)
    if not os.path.isdir(run):
        return False
    paths = [os.path.join(run, "records.jsonl")] + sorted(glob.glob(os.path.join(run, "records", "*.jsonl")))
    for path in paths:
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                if item not in line or config not in line:
                    continue
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if r.get("item_id") == item and r.get("config") == config:
                    return bool((r.get("config_meta") or {}).get("text_only"))
    return False
