"""Configuration arguments as harnesses pass them (strings from --model_args, or typed values)."""

from .client import CONFIG_FIELDS

_INT = {"frames", "seed", "stream", "min_frames", "max_frames", "image_patch_size"}
_FLOAT = {"sample_fps", "min_pixels", "max_pixels", "total_pixels"}
_BOOL = {"force_last", "force_sample", "no_autorotate"}


def to_bool(v):
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("1", "true", "yes", "on"):
        return True
    if s in ("0", "false", "no", "off", ""):
        return False
    raise ValueError("not a boolean: %r" % (v,))


def config_from(kwargs):
    """The framesweep configuration fields among kwargs (None and "" dropped), typed."""
    out = {}
    for k in CONFIG_FIELDS:
        v = kwargs.get(k)
        if v is None or v == "":
            continue
        if k in _INT:
            v = int(v)
        elif k in _FLOAT:
            v = float(v)
        elif k in _BOOL:
            v = to_bool(v)
        else:
            v = str(v)
        out[k] = v
    return out
