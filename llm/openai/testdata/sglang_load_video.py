"""What SGLang's current video path makes of a video_url, as a test oracle (issue 33).

Re-implemented here from the upstream sources (sgl-project/sglang), not copied:
  - python/sglang/srt/utils/common.py, load_video: the branch a string URL takes (http(s), data:,
    file://, an existing path, else the whole string base64-decoded with validate=True), a data: URL
    split at its first ',' and base64-decoded with validate=True into a temporary ".mp4" file that
    decord's VideoReader opens.
  - python/sglang/srt/multimodal/processors/qwen_vl.py: smart_nframes (FPS 2.0, FPS_MIN_FRAMES 4,
    FPS_MAX_FRAMES 768, FRAME_FACTOR 2, no video_config), the sampled indices of preprocess_video in
    both released forms (torch.linspace(...).round() and np.linspace(..., dtype=int64) + np.unique),
    smart_resize with the video pixel bounds, and the metadata Qwen3-VL gets (fps, frames_indices).

decord does not install on Debian 12, so PyAV (the same FFmpeg libraries) stands in for its
VideoReader, read from dmlc/decord src/video/video_reader.cc: len() is the number of packets of the
video stream (IndexKeyframes), get_avg_fps() the stream's avg_frame_rate num/den, get_batch() the
decoded frames in RGB24. torchcodec's average_fps (frames / (end - begin of the stream)) is reported
beside it.

usage: python3 sglang_load_video.py URLFILE...
for each URLFILE (a video_url's url) writes URLFILE.json and, when the video loads, URLFILE.rgb (the
sampled frames, N×H×W×3); one process for all (importing torch takes seconds).
"""
import base64
import json
import math
import os
import sys
import tempfile
from urllib.parse import unquote, urlparse

import av
import numpy as np
import torch


class PyAVReader:
    """decord.VideoReader's counts and frames, through PyAV."""

    def __init__(self, path):
        with av.open(path) as c:
            s = c.streams.video[0]
            tb = s.time_base
            self.avg_fps = s.average_rate.numerator / s.average_rate.denominator
            pts, ends = [], []
            for p in c.demux(s):
                if p.size == 0:  # the demuxer's final flush packet, not a frame
                    continue
                pts.append(p.pts)
                ends.append(p.pts + p.duration)
            self.packets = len(pts)
            self.torchcodec_fps = self.packets / (float(max(ends) * tb) - float(min(pts) * tb))
        with av.open(path) as c:
            self.frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]

    def __len__(self):
        return self.packets

    def get_avg_fps(self):
        return self.avg_fps

    def get_batch(self, idx):
        return np.stack([self.frames[i] for i in idx])


def load_video(url):
    """common.py load_video's branches for a string; returns (branch, reader)."""
    if url.startswith(("http://", "https://")):
        raise ValueError("http(s) URLs are not fetched by this oracle")
    if url.startswith("data:"):
        _, encoded = url.split(",", 1)
        return "data", reader_of(base64.b64decode(encoded, validate=True))
    if url.startswith("file://"):
        return "file", PyAVReader(unquote(urlparse(url).path))
    if os.path.isfile(unquote(urlparse(url).path)):
        return "path", PyAVReader(url)
    return "base64", reader_of(base64.b64decode(url, validate=True))


def reader_of(data):
    with tempfile.NamedTemporaryFile(suffix=".mp4", delete=False) as f:
        f.write(data)
        path = f.name
    try:
        return PyAVReader(path)
    finally:
        os.unlink(path)


def by_factor(x, f, how):
    return {"round": round, "ceil": math.ceil, "floor": math.floor}[how](x / f) * f


def smart_nframes(total, video_fps):
    fps, min_frames = 2.0, by_factor(4, 2, "ceil")
    max_frames = by_factor(min(768, total), 2, "floor")
    n = total / video_fps * fps
    n = min(min(max(n, min_frames), max_frames), total)
    n = by_factor(n, 2, "floor")
    if not (2 <= n <= total):
        raise ValueError(f"nframes should in interval [2, {total}], but got {n}.")
    return n


def smart_resize(h, w, factor, min_pixels, max_pixels):
    if max(h, w) / min(h, w) > 200:
        raise ValueError("absolute aspect ratio must be smaller than 200")
    hb, wb = max(factor, by_factor(h, factor, "round")), max(factor, by_factor(w, factor, "round"))
    if hb * wb > max_pixels:
        beta = math.sqrt(h * w / max_pixels)
        hb, wb = by_factor(h / beta, factor, "floor"), by_factor(w / beta, factor, "floor")
    elif hb * wb < min_pixels:
        beta = math.sqrt(min_pixels / (h * w))
        hb, wb = by_factor(h * beta, factor, "ceil"), by_factor(w * beta, factor, "ceil")
    return hb, wb


def main(urlfile):
    with open(urlfile) as f:
        url = f.read()
    result = {}
    try:
        branch, vr = load_video(url)
    except Exception as e:  # what the server answers: the loader's exception
        result["error"] = f"{type(e).__module__}.{type(e).__name__}: {e}"
        json.dump(result, open(urlfile + ".json", "w"))
        return
    total, fps = len(vr), vr.get_avg_fps()
    n = smart_nframes(total, fps)
    idx_round = torch.linspace(0, total - 1, n).round().long().tolist()
    idx_trunc = np.unique(np.linspace(0, total - 1, num=n, dtype=np.int64)).tolist()
    batch = vr.get_batch(idx_round)
    min_pixels = 128 * 28 * 28
    max_pixels = max(min(768 * 28 * 28, int(float(128000 * 28 * 28 * 0.9)) / n * 2), int(min_pixels * 1.05))
    h, w = batch.shape[1], batch.shape[2]
    result.update(
        branch=branch,
        total_frames=total,
        avg_fps=fps,
        torchcodec_fps=vr.torchcodec_fps,
        nframes=n,
        nframes_torchcodec=smart_nframes(total, vr.torchcodec_fps),
        indices_round=idx_round,
        indices_trunc_unique=idx_trunc,
        frames_shape=list(batch.shape),
        resize_hw=list(smart_resize(h, w, 28, min_pixels, max_pixels)),
        qwen3_timestamps=[i / fps for i in idx_round],
    )
    batch.astype(np.uint8).tofile(urlfile + ".rgb")
    json.dump(result, open(urlfile + ".json", "w"))


if __name__ == "__main__":
    for urlfile in sys.argv[1:]:
        main(urlfile)
