"""Peer (d): OpenCV VideoCapture (Debian python3-opencv, FFmpeg backend) with per-configuration seeks.

What most OpenCV frame loaders do: per config, open a VideoCapture, and for each index
cap.set(CAP_PROP_POS_FRAMES, i) then cap.read() (OpenCV seeks back to a keyframe and decodes forward
to the frame on every set), BGR -> RGB with cv2.cvtColor, then Pillow bicubic to the config's size.
Display rotation is off (CAP_PROP_ORIENTATION_AUTO = 0) as it is for the other peers and framesweep's
run. "served" is OpenCV's own position after each read, minus one. OpenCV reads the first video stream
only: when the plan decodes another, the peer refuses (common.REFUSED) rather than serve other frames.
"""
import common  # noqa: F401  (starts the import clock)
import time

import cv2
import numpy as np

spec = common.load_spec()
t_imported = time.perf_counter()
video = spec["video"]
# OpenCV 4.6's FFmpeg backend opens the first video stream and takes no stream choice (the
# CAP_PROP_VIDEO_STREAM open parameter is refused as unsupported), so any other stream is refused.
first = spec["video_streams"][0] if spec["video_streams"] else None
if spec["stream"] != first:
    common.refuse(video, "cv2.VideoCapture (OpenCV %s, FFmpeg backend) reads only the first video stream (%s), "
                  "not stream %d" % (cv2.__version__, first, spec["stream"]))
outputs, served, cap_backend = [], [], None
for c in spec["configs"]:
    cap = cv2.VideoCapture(video, cv2.CAP_FFMPEG)
    if not cap.isOpened():
        common.fail(video, "cv2.VideoCapture could not open the file")
    cap.set(cv2.CAP_PROP_ORIENTATION_AUTO, 0)
    cap_backend = cap.getBackendName()
    frames, got = [], []
    for i in c["indices"]:
        cap.set(cv2.CAP_PROP_POS_FRAMES, i)
        ok, bgr = cap.read()
        if not ok:
            common.fail(video, "cv2 read failed at frame %d (config %s)" % (i, c["id"]))
        got.append(int(cap.get(cv2.CAP_PROP_POS_FRAMES)) - 1)
        frames.append(common.pil_resize(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), c["width"], c["height"]))
    cap.release()
    outputs.append(np.stack(frames))
    served.append(got)
decoder = {"backend": cap_backend, "cv_threads": cv2.getNumThreads()}
# OpenCV decodes from a keyframe inside every seek and does not say how many frames: null.
common.finish(spec, "opencv-seek", first, t_imported, outputs, served, None, decoder, common.versions(cv2=cv2.__version__))
