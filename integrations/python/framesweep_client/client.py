"""HTTP client of `framesweep serve` (Python standard library + numpy only).

    from framesweep_client import Client
    c = Client("http://127.0.0.1:8765")
    frames, meta = c.frames("clip.mp4", preset="qwen2.5-vl", frames=16, resolution="qwen2.5-vl")
    frames.shape          # (16, 280, 476, 3) uint8, exactly what `framesweep extract` stores
    meta["key"], meta["indices"], meta["frames_sha256"]

The configuration fields are those of one grid configuration (docs/serve.md lists them): preset,
policy or loader (a harness loader: docs/loaders.md), frames or sample_fps, seed, resolution,
pipeline, kernel, dtype, norm, stream, no_autorotate, on_damaged, min_frames, max_frames, force_last,
force_sample, torch, and the qwen-vl-utils loaders' image_patch_size, min_pixels, max_pixels,
total_pixels.
"""

import ast
import hashlib
import json
import os
import struct
import time
import urllib.error
import urllib.parse
import urllib.request

import numpy as np

__all__ = ["Client", "FramesweepError", "load_safetensors", "load_npy", "sha256_of", "CONFIG_FIELDS"]

# The request fields of one configuration (serve.Request in Go).
CONFIG_FIELDS = (
    "preset", "policy", "loader", "frames", "sample_fps", "seed", "resolution", "pipeline",
    "min_frames", "max_frames", "force_last", "force_sample", "torch",
    "image_patch_size", "min_pixels", "max_pixels", "total_pixels",
    "kernel", "dtype", "norm", "stream", "no_autorotate", "on_damaged",
)

# Metadata entries of an object that hold JSON (pipeline.ObjectMetadata); frames() decodes them.
_JSON_META = ("indices", "pts", "pts_s", "damaged", "libraries", "layout", "psnr_db", "loader_request", "loader_result")

_DTYPES = {"U8": np.uint8, "F16": np.float16, "F32": np.float32, "I64": np.int64}


class FramesweepError(Exception):
    """An error response of the server: HTTP status, stable code (docs/serve.md) and message."""

    def __init__(self, status, code, message):
        super().__init__("%d %s: %s" % (status, code, message))
        self.status = status
        self.code = code
        self.message = message


def load_safetensors(data):
    """Parse a safetensors file held in memory: ({name: ndarray}, metadata).

    Arrays alias data (writable when data is a bytearray)."""
    if len(data) < 8:
        raise ValueError("safetensors: %d bytes" % len(data))
    (n,) = struct.unpack_from("<Q", data, 0)
    if n > len(data) - 8:
        raise ValueError("safetensors: header of %d bytes in %d" % (n, len(data)))
    header = json.loads(bytes(data[8:8 + n]))
    meta = header.pop("__metadata__", {}) or {}
    base = 8 + n
    out = {}
    for name, t in header.items():
        b, e = t["data_offsets"]
        dt = np.dtype(_DTYPES[t["dtype"]]).newbyteorder("<")
        out[name] = np.frombuffer(data, dtype=dt, count=(e - b) // dt.itemsize, offset=base + b).reshape(t["shape"])
    return out, meta


def load_npy(data):
    """Parse a .npy file (format 1.0, as the server writes it) held in memory; the array aliases data."""
    if bytes(data[:6]) != b"\x93NUMPY":
        raise ValueError("not a .npy file")
    major = data[6]
    if major == 1:
        (hlen,) = struct.unpack_from("<H", data, 8)
        start = 10
    else:
        (hlen,) = struct.unpack_from("<I", data, 8)
        start = 12
    head = ast.literal_eval(bytes(data[start:start + hlen]).decode("latin1"))
    if head["fortran_order"]:
        raise ValueError("npy: Fortran order is not supported")
    dt = np.dtype(head["descr"])
    count = int(np.prod(head["shape"], dtype=np.int64))
    return np.frombuffer(data, dtype=dt, count=count, offset=start + hlen).reshape(head["shape"])


def sha256_of(arr):
    """Hex sha256 of an array's C-order bytes (what X-Framesweep-Frames-Sha256 and a sweep record's
    input_sha256 name), without copying a contiguous array."""
    a = np.ascontiguousarray(arr)
    return hashlib.sha256(memoryview(a).cast("B")).hexdigest()


def _config_body(video, config):
    unknown = sorted(set(config) - set(CONFIG_FIELDS) - {"format"})
    if unknown:
        raise TypeError("unknown configuration field(s): %s (known: %s)" % (", ".join(unknown), ", ".join(CONFIG_FIELDS)))
    body = {"video": os.fspath(video)}
    for k, v in config.items():
        if v is None:
            continue
        if isinstance(v, np.generic):
            v = v.item()
        body[k] = v
    return body


class Client:
    """A client of one `framesweep serve`.

    url: the server (http://127.0.0.1:8765 by default, or $FRAMESWEEP_URL); token / token_file: the
    bearer token when the server runs with --token-file ($FRAMESWEEP_TOKEN); timeout: seconds per
    request; retries: how often a 503 (overloaded) or a 429 (too_many_requests) is retried, after its Retry-After."""

    def __init__(self, url=None, token=None, token_file=None, timeout=600.0, retries=20):
        self.url = (url or os.environ.get("FRAMESWEEP_URL") or "http://127.0.0.1:8765").rstrip("/")
        if token is None and token_file:
            with open(token_file, encoding="utf-8") as f:
                token = f.read().strip()
        if token is None:
            token = os.environ.get("FRAMESWEEP_TOKEN") or None
        self.token = token
        self.timeout = timeout
        self.retries = retries

    # --- transport -------------------------------------------------------------------------------

    def _request(self, method, path, body=None):
        data = None
        headers = {"Accept": "application/json, application/octet-stream"}
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        attempt = 0
        while True:
            req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as res:
                    n = res.headers.get("Content-Length")
                    buf = bytearray(int(n)) if n is not None else None
                    if buf is not None:
                        view, got = memoryview(buf), 0
                        while got < len(buf):
                            k = res.readinto(view[got:])
                            if not k:
                                raise FramesweepError(res.status, "short_read", "got %d of %d bytes" % (got, len(buf)))
                            got += k
                    else:
                        buf = bytearray(res.read())
                    return res.status, res.headers, buf
            except urllib.error.HTTPError as e:
                raw = e.read()
                try:
                    j = json.loads(raw)
                    err = FramesweepError(j.get("status", e.code), j.get("code", "http_%d" % e.code), j.get("error", ""))
                except ValueError:
                    err = FramesweepError(e.code, "http_%d" % e.code, raw.decode("utf-8", "replace")[:200])
                busy = (e.code == 503 and err.code == "overloaded") or (e.code == 429 and err.code == "too_many_requests")
                if busy and attempt < self.retries:
                    attempt += 1
                    time.sleep(min(float(e.headers.get("Retry-After") or 1), 30.0))
                    continue
                raise err from None

    def _json(self, method, path, body=None):
        _, _, buf = self._request(method, path, body)
        return json.loads(bytes(buf))

    # --- API -------------------------------------------------------------------------------------

    def health(self):
        """GET /v1/health: status, limits and counters."""
        return self._json("GET", "/v1/health")

    def loaders(self):
        """The harness loaders the server builds frames with ("loader" requests, docs/loaders.md), from
        /v1/health's "loaders" (asked once); an empty tuple when the server predates them."""
        if getattr(self, "_loaders", None) is None:
            self._loaders = tuple(self.health().get("loaders") or ())
        return self._loaders

    def probe(self, video, stream=None, no_autorotate=False):
        """GET /v1/probe: the video's description, as `framesweep probe --json` prints it."""
        q = {"video": os.fspath(video)}
        if stream is not None:
            q["stream"] = str(int(stream))
        if no_autorotate:
            q["no_autorotate"] = "true"
        return self._json("GET", "/v1/probe?" + urllib.parse.urlencode(q))

    def plan(self, video, **config):
        """POST /v1/plan: the configuration's indices, timestamps, output size, key, shape and size."""
        return self._json("POST", "/v1/plan", _config_body(video, config))

    def object(self, video, **config):
        """POST /v1/frames: the whole stored object (safetensors bytes) and the response headers."""
        _, headers, buf = self._request("POST", "/v1/frames", _config_body(video, config))
        return buf, headers

    def frames(self, video, format="safetensors", verify=True, **config):
        """POST /v1/frames → (frames, meta).

        frames: numpy array [N, H, W, 3] (or [N, images, H, W, 3] for tiles + thumbnail), uint8 or the
        requested float dtype, exactly the frames tensor extract stores for this configuration.
        meta: the object's provenance (its safetensors metadata; JSON entries such as indices, pts_s
        and libraries decoded) plus frames_sha256, served and config from the response headers.
        format="npy" fetches the bare tensor; meta then holds what the headers say. verify re-hashes the
        frames against the server's X-Framesweep-Frames-Sha256."""
        if format not in ("safetensors", "npy"):
            raise ValueError("format must be safetensors or npy")
        body = _config_body(video, config)
        path = "/v1/frames" if format == "safetensors" else "/v1/frames?format=npy"
        _, headers, buf = self._request("POST", path, body)
        if format == "npy":
            arr = load_npy(buf)
            meta = {
                "key": headers.get("X-Framesweep-Key"),
                "source_sha256": headers.get("X-Framesweep-Source-Sha256"),
                "pipeline": headers.get("X-Framesweep-Pipeline"),
                "dtype": headers.get("X-Framesweep-Dtype"),
                "indices": [int(x) for x in headers.get("X-Framesweep-Indices", "").split(",") if x],
            }
        else:
            tensors, raw = load_safetensors(buf)
            arr = tensors["frames"]
            meta = dict(raw)
            for k in _JSON_META:
                if k in meta:
                    meta[k] = json.loads(meta[k])
            meta["config"] = headers.get("X-Framesweep-Config")
        meta["frames_sha256"] = headers.get("X-Framesweep-Frames-Sha256")
        meta["served"] = headers.get("X-Framesweep-Served")
        # The object's own "config" names the first configuration that built these bytes; this one is
        # the request's (the two differ only for configurations with identical bytes).
        meta["request_config"] = headers.get("X-Framesweep-Config")
        if verify and meta["frames_sha256"] and sha256_of(arr) != meta["frames_sha256"]:
            raise FramesweepError(200, "corrupt", "the frames do not hash to the server's X-Framesweep-Frames-Sha256")
        return arr, meta

    def record_frames(self, record, video=None, **overrides):
        """A sweep record's input from this server → (frames, meta), checked against the record.

        record: one line of RUN/records.jsonl (a dict); its fields become the request
        (records.record_request: docs/serve.md "A record's input"); video names it on this server
        (default the record's video, relative to the RUN's video root); overrides add or replace
        request fields the record does not hold (sample_fps, torch, …). Raises FramesweepError with
        code "mismatch" when the served indices or frames are not the record's (input_sha256); a 403
        or 404 for the record's own video says that it is relative to the sweep's video root and
        names --video-root."""
        from .records import check_record, record_request

        body = record_request(record, video)
        body.update(overrides)
        v = body.pop("video")
        try:
            arr, meta = self.frames(v, **body)
        except FramesweepError as e:
            if video is None and (e.status, e.code) in ((403, "forbidden"), (404, "not_found")):
                # The record names its video relative to the sweep's video root, not to this server's.
                raise FramesweepError(e.status, e.code, "%s — the record names its video %r relative to its sweep's video root "
                                      "(run.json's video_root): serve that directory (framesweep serve --root VIDEO_ROOT), or sweep "
                                      "with --video-root at the served root, or pass video= naming the file on this server"
                                      % (e.message, v)) from None
            raise
        check_record(record, arr, meta["indices"])
        return arr, meta
