"""A lossless PNG encoder on the standard library (zlib), for RGB uint8 frames: what the adapters
send to OpenAI-compatible servers (framesweep's own openai runtime sends PNG too)."""

import struct
import zlib

import numpy as np


def _chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def encode_png(img, level=6):
    """PNG bytes of an [H, W, 3] uint8 array (8-bit RGB, no interlace, filter 0 on every row)."""
    a = np.asarray(img)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] != 3:
        raise ValueError("encode_png wants an [H, W, 3] uint8 array, got %s %s" % (a.dtype, a.shape))
    h, w, _ = a.shape
    raw = np.empty((h, 1 + 3 * w), dtype=np.uint8)
    raw[:, 0] = 0
    raw[:, 1:] = a.reshape(h, 3 * w)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(raw.tobytes(), level)) + _chunk(b"IEND", b"")
