"""Peer (b): PyAV per configuration, as lmms-eval's read_video_pyav does it.

lmms-eval lmms_eval/models/model_utils/load_video.py (read_video_pyav, the stream path it takes for
every container but webm/mkv): per call, av.open the file, seek(0), decode from the start with PyAV's
default threading, keep the av.VideoFrame objects whose running index is in the plan, stop after the
last index, then to_ndarray(format="rgb24") each kept frame and np.stack them. The model's processor
then resizes; here that is Pillow bicubic to the config's size. Every configuration repeats all of it.
read_video_pyav decodes container.decode(video=0), the first video stream; here the plan's stream is
decoded instead (common.video_stream), so that every peer serves the same frames on a file with several
video streams (where the two differ, lmms-eval itself reads another stream than FFmpeg's best).
The indices come from framesweep's plan (read_video_pyav's np.linspace(0, N-1, n, dtype=int) is the
lmms-eval preset; N from the header is 0 in Matroska, so the plan is passed in, not recomputed).
"""
import common  # noqa: F401  (starts the import clock)
import time

import av
import numpy as np

spec = common.load_spec()
t_imported = time.perf_counter()
video = spec["video"]
outputs, served, decoded, decoder, index = [], [], 0, None, None
try:
    for c in spec["configs"]:
        container = av.open(video)
        stream = common.video_stream(container, spec)
        index = stream.index
        decoder = {"thread_type": str(stream.thread_type), "thread_count": stream.thread_count}
        indices = np.asarray(c["indices"])
        container.seek(0)
        start_index, end_index = indices[0], indices[-1]
        frames, got = [], []
        for i, frame in enumerate(container.decode(stream)):
            decoded += 1
            if i > end_index:
                break
            if i >= start_index and i in indices:
                frames.append(frame)
                got.append(i)
        rgb = np.stack([x.to_ndarray(format="rgb24") for x in frames])
        container.close()
        w, h = c["width"], c["height"]
        outputs.append(np.stack([common.pil_resize(f, w, h) for f in rgb]))
        served.append(got)
except (av.AVError, ValueError, OSError) as e:
    common.fail(video, e)
common.finish(spec, "pyav-per-config", index, t_imported, outputs, served, decoded, decoder,
              common.versions(av=av.__version__))
