"""Peer (c): PyAV decode-once over the union, the best a careful Python user does.

One av.open of the plan's stream (common.video_stream), frame threading on (stream.thread_type =
"AUTO"), one forward decode up to the last needed index; each needed frame is converted once
(to_ndarray(format="rgb24")) and resized at once with Pillow bicubic to every output size that needs
it, so only the outputs are held; then each config's array is assembled from the shared resized frames.
"""
import common  # noqa: F401  (starts the import clock)
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
last = max(sizes)
resized, decoded = {}, 0
try:
    container = av.open(video)
    stream = common.video_stream(container, spec)
    index = stream.index  # read before close: PyAV's stream reads freed memory after it
    stream.thread_type = "AUTO"
    decoder = {"thread_type": str(stream.thread_type), "thread_count": stream.thread_count}
    for i, frame in enumerate(container.decode(stream)):
        decoded += 1
        if i in sizes:
            rgb = frame.to_ndarray(format="rgb24")
            for (w, h) in sizes[i]:
                resized[(i, w, h)] = common.pil_resize(rgb, w, h)
        if i >= last:
            break
    container.close()
except (av.AVError, ValueError, OSError) as e:
    common.fail(video, e)
outputs, served = [], []
for c in spec["configs"]:
    missing = [i for i in c["indices"] if (i, c["width"], c["height"]) not in resized]
    if missing:
        common.fail(video, "decode ended after %d frames; config %s needs %s" % (decoded, c["id"], missing[:5]))
    outputs.append(np.stack([resized[(i, c["width"], c["height"])] for i in c["indices"]]))
    served.append(c["indices"])
common.finish(spec, "pyav-once", index, t_imported, outputs, served, decoded, decoder, common.versions(av=av.__version__))
