"""Oracle for decode's ColourSwsDefault + Sequential: what PyAV hands a Python harness. For each
video it opens container.streams.video[0] (thread_type "AUTO", as lmms-eval sets), decodes every
frame with container.decode(video=0) and hashes frame.to_ndarray(format="rgb24"). Prints one JSON
line per video: {"path", "sha256": [per frame], "shape": [h, w] of the first, "error": str|null}.
Run by decode/sequential_test.go with Debian's python3-av."""

import hashlib
import json
import sys

import av


def main():
    for path in sys.argv[1:]:
        rec = {"path": path, "sha256": [], "shape": None, "error": None}
        try:
            with av.open(path) as c:
                s = c.streams.video[0]
                s.thread_type = "AUTO"
                for f in c.decode(video=0):
                    a = f.to_ndarray(format="rgb24")
                    if rec["shape"] is None:
                        rec["shape"] = list(a.shape[:2])
                    rec["sha256"].append(hashlib.sha256(a.tobytes()).hexdigest())
        except Exception as e:  # the harness sees this exception
            rec["error"] = "%s: %s" % (type(e).__name__, e)
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
