"""Shared plumbing of the bench peers scripts (framesweep bench peers runs each as its own process).

A peer reads a spec (JSON, written by framesweep):
  {"video": PATH, "stream": S, "video_streams": [...],
   "configs": [{"id": ID, "indices": [...], "width": W, "height": H}, ...], "dump": DIR or null}
decodes stream S (its index in the file: the stream framesweep's plan decodes; "video_streams" lists
every video stream of the file), builds every config's frames as an (N, H, W, 3) uint8 array, and
prints one JSON object on stdout:
  {"peer", "stream", "versions", "decoder", "import_s", "work_s", "decoded_frames",
   "configs": [{"id", "served", "shape"}]}
"stream" is the stream the peer decoded; "served" lists, per config, the frame index the peer believes
each output frame is (its own count or seek position). With "dump" set, each config's array is saved as
DIR/NNN.npy (config order) for the PSNR check; timed runs have no dump. Errors: one line on stderr naming
the video, exit status 1; a peer that cannot open stream S says so in one line and exits with
REFUSED (3), which the bench reports as a refused peer rather than a failure.
Only Debian's python3 packages are used (numpy, Pillow, PyAV, OpenCV).
"""
import json
import os
import platform
import sys
import time

T0 = time.perf_counter()  # before the heavy imports of the peer script

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402


REFUSED = 3  # exit status: this peer cannot open the plan's stream


def fail(video, msg, status=1):
    sys.stderr.write("%s: %s\n" % (video, " ".join(str(msg).split())))
    sys.exit(status)


def refuse(video, msg):
    fail(video, msg, REFUSED)


def video_stream(container, spec):
    """The plan's stream (spec["stream"], its index in the file) among PyAV's streams, or a refusal."""
    n = spec["stream"]
    for s in container.streams:
        if s.index == n:
            if s.type != "video":
                refuse(spec["video"], "PyAV sees stream %d as %s, not video" % (n, s.type))
            return s
    refuse(spec["video"], "PyAV finds no stream %d (the file has %d)" % (n, len(container.streams)))


def load_spec():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: %s SPEC.json\n" % os.path.basename(sys.argv[0]))
        sys.exit(2)
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    for c in spec["configs"]:
        if not c["indices"]:
            fail(spec["video"], "config %s has no indices" % c["id"])
    return spec


def pil_resize(rgb, w, h):
    """Pillow bicubic, the kernel framesweep's pil-bicubic reproduces exactly."""
    im = Image.fromarray(rgb)
    if im.size == (w, h):
        return np.asarray(im)
    return np.asarray(im.resize((w, h), Image.BICUBIC))


def versions(**extra):
    import PIL
    v = {"python": platform.python_version(), "numpy": np.__version__, "pillow": PIL.__version__}
    v.update(extra)
    return v


def finish(spec, peer, stream, t_imported, outputs, served, decoded, decoder, vers):
    """Dump (check runs only) and print the result line. outputs[k] is config k's array; stream is the
    index of the stream decoded."""
    t_done = time.perf_counter()
    res = []
    for k, c in enumerate(spec["configs"]):
        a = outputs[k]
        if spec.get("dump"):
            np.save(os.path.join(spec["dump"], "%03d.npy" % k), np.ascontiguousarray(a, dtype=np.uint8))
        res.append({"id": c["id"], "served": [int(i) for i in served[k]], "shape": list(a.shape)})
    json.dump({"peer": peer, "stream": stream, "versions": vers, "decoder": decoder, "import_s": t_imported - T0,
               "work_s": t_done - t_imported, "decoded_frames": decoded, "configs": res}, sys.stdout)
    sys.stdout.write("\n")
