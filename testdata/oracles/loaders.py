"""Oracle for loader/load: runs the upstream readers themselves, unmodified, from ../shared/oracles
(lmms-eval's read_video, PyAV backend; qwen-vl-utils' fetch_video with the torchvision reader) and
prints what they return, one JSON line per job.

usage: loaders.py ORACLES_DIR lmms-eval|qwen-vl-utils JOB...
JOB is PATH|FRAMES|FPS (FPS empty = None; for qwen-vl-utils FRAMES 0 means fps mode).
Each line: {"job", "error", "shape", "frames": [sha256 of each returned frame, uint8 HWC],
and for qwen-vl-utils "resized_shape", "resized": [sha256 of each resized frame, cast to uint8
HWC after checking the values are integers 0..255], "sample_fps", "indices"}.

For speed, torchvision.io.read_video is memoised per path (fetch_video calls it once per job with
the same arguments; the function is deterministic), so a video is decoded once for all its budgets.
Run by loader/load/oracle_test.go with Debian's python3-av, python3-torch, python3-torchvision."""

import functools
import hashlib
import json
import os
import sys


def digest(a):
    return hashlib.sha256(a.tobytes()).hexdigest()


def lmms(oracles, jobs):
    sys.path.insert(0, os.path.join(oracles, "lmms-eval"))
    import load_video  # noqa: E402  (lmms_eval/models/model_utils/load_video.py)

    for job in jobs:
        path, frames, fps = job.split("|")
        rec = {"job": job, "error": None}
        try:
            a = load_video.read_video(path, num_frm=int(frames), fps=float(fps) if fps else None)
            rec["shape"] = list(a.shape)
            rec["frames"] = [digest(f) for f in a]
        except Exception as e:
            rec["error"] = "%s: %s" % (type(e).__name__, e)
        print(json.dumps(rec), flush=True)


def qwen(oracles, jobs):
    os.environ["FORCE_QWENVL_VIDEO_READER"] = "torchvision"
    sys.path.insert(0, os.path.join(oracles, "qwen-vl-utils"))
    import torch
    from torchvision import io

    io.read_video = functools.lru_cache(maxsize=1)(io.read_video)
    import vision_process  # noqa: E402  (qwen_vl_utils/vision_process.py)

    vision_process.io = io
    for job in jobs:
        path, frames, fps = job.split("|")
        ele = {"video": path}
        if int(frames) > 0:
            ele["nframes"] = int(frames)
        if fps:
            ele["fps"] = float(fps)
        rec = {"job": job, "error": None}
        try:
            (video, meta), sample_fps = vision_process.fetch_video(ele, return_video_sample_fps=True, return_video_metadata=True)
            raw, _, _ = io.read_video(path, start_pts=0.0, end_pts=None, pts_unit="sec", output_format="TCHW")
            idx = meta["frames_indices"]
            sel = raw[idx].permute(0, 2, 3, 1).contiguous().numpy()
            if not bool(torch.all(video == video.round())) or float(video.min()) < 0 or float(video.max()) > 255:
                raise SystemExit("resized values are not integers in 0..255")
            res = video.to(torch.uint8).permute(0, 2, 3, 1).contiguous().numpy()
            rec.update(shape=list(sel.shape), frames=[digest(f) for f in sel], resized_shape=list(res.shape),
                       resized=[digest(f) for f in res], sample_fps=sample_fps, indices=[int(i) for i in idx],
                       total=int(meta["total_num_frames"]), fps=float(meta["fps"]))
        except SystemExit:
            raise
        except Exception as e:
            rec["error"] = "%s: %s" % (type(e).__name__, e)
        print(json.dumps(rec), flush=True)


def main():
    oracles, which, jobs = sys.argv[1], sys.argv[2], sys.argv[3:]
    {"lmms-eval": lmms, "qwen-vl-utils": qwen}[which](oracles, jobs)


if __name__ == "__main__":
    main()
