"""Peer (f): a keyframe-seek reader, as decord and torchcodec read: PyAV over the union of the plan.

One av.open, an index of the plan's stream (common.video_stream) from a demux scan (every packet's pts
and keyframe flag, sorted by pts: frame i is the i-th pts, what decord and torchcodec's exact mode build
at open), frame threading on (thread_type "AUTO"). For each wanted frame of the union, in ascending
order: when no keyframe lies between the decoder's position and the frame, decode forward; otherwise
seek to the keyframe at or before it (container.seek(pts, backward=True, stream=...)) and decode forward
until its pts (decord's SeekAccurate and torchcodec's "can we avoid seeking" do the same). Each wanted
frame is converted once (to_ndarray(format="rgb24")) and resized with Pillow bicubic to every size that
needs it. "served" is each frame's index by its pts in the scan; "decoded_frames" counts every picture
decoded.
"""
import common  # noqa: F401  (starts the import clock)
import bisect
import time

import av
import numpy as np

spec = common.load_spec()
t_imported = time.perf_counter()
video = spec["video"]
sizes = {}  # frame index -> set of (w, h) it is needed at
for c in spec["configs"]:
    for i in c["indices"]:
        sizes.setdefault(i, set()).add((c["width"], c["height"]))


def scan(container, stream):
    """Every video packet's pts, sorted (frame i = pts[i]), and the sorted pts of its keyframes."""
    pts, keys = [], []
    for pkt in container.demux(stream):
        if pkt.pts is None or pkt.size == 0:
            continue  # the demuxer's flush packet
        pts.append(pkt.pts)
        if pkt.is_keyframe:
            keys.append(pkt.pts)
    pts.sort()
    keys.sort()
    return pts, keys


resized, got, decoded = {}, {}, 0
try:
    container = av.open(video)
    stream = common.video_stream(container, spec)
    index = stream.index  # read before close: PyAV's stream reads freed memory after it
    pts, keys = scan(container, stream)
    stream.thread_type = "AUTO"
    decoder = {"thread_type": str(stream.thread_type), "thread_count": stream.thread_count}
    it, pos = None, None  # the decoding iterator and the pts of the last frame it gave
    for i in sorted(sizes):
        if i >= len(pts):
            common.fail(video, "frame %d past the %d frames of the scan" % (i, len(pts)))
        want = pts[i]
        key = keys[max(bisect.bisect_right(keys, want) - 1, 0)]
        if it is None or pos is None or want <= pos or key > pos:
            container.seek(key, backward=True, any_frame=False, stream=stream)
            it, pos = container.decode(stream), None
        frame = None
        for f in it:
            decoded += 1
            pos = f.pts
            if f.pts is not None and f.pts >= want:
                frame = f
                break
        if frame is None or frame.pts != want:
            common.fail(video, "decoding from the keyframe at pts %d did not reach frame %d (pts %d)" % (key, i, want))
        got[i] = bisect.bisect_left(pts, frame.pts)
        rgb = frame.to_ndarray(format="rgb24")
        for (w, h) in sizes[i]:
            resized[(i, w, h)] = common.pil_resize(rgb, w, h)
    container.close()
except (av.AVError, ValueError, OSError) as e:
    common.fail(video, e)
outputs, served = [], []
for c in spec["configs"]:
    outputs.append(np.stack([resized[(i, c["width"], c["height"])] for i in c["indices"]]))
    served.append([got[i] for i in c["indices"]])
common.finish(spec, "pyav-seek", index, t_imported, outputs, served, decoded, decoder, common.versions(av=av.__version__))
