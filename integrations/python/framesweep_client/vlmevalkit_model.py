"""A VLMEvalKit video model whose frames come from `framesweep serve`.

VLMEvalKit (open-compass/VLMEvalKit) builds models from `vlmeval.config.supported_VLM`, a dict of
constructors; register this class there (or in a launcher that imports vlmeval first):

    from functools import partial
    from vlmeval.config import supported_VLM
    from framesweep_client.vlmevalkit_model import FramesweepVideoLLM
    supported_VLM["framesweep-qwen2.5-vl"] = partial(FramesweepVideoLLM, url="http://127.0.0.1:8765",
        api_base="http://127.0.0.1:8000/v1", api_model="Qwen/Qwen2.5-VL-7B-Instruct")

then `python run.py --data Video-MME_8frame Video-MME_1fps --model framesweep-qwen2.5-vl`: one
registration serves nframe and fps datasets. With VIDEO_LLM = True the video datasets send the video
path itself ({'type': 'video', 'value': PATH}; the paths must lie under a --root of the server).

What VLMEvalKit's runner does with the budget (vlmeval/inference_video.py, infer_data, for every
sample of a non-API model): when the model's nframe is > 0, a dataset with nframe > 0 sets
model.nframe to it; a dataset in fps mode sets model.nframe = None, unless the model's fps is 0 or
unset (getattr(model, 'fps', 0) == 0), which raises ValueError("fps is not suitable"). Then, when the
model's fps is > 0, an fps dataset sets model.fps to its fps, and an nframe dataset sets model.fps =
None (unless the model's nframe is 0, which raises). A model with fps None or 0 therefore never gets
the dataset's fps: Video-MME_1fps would leave it with nframe None and fps None, its own default. So
this class starts with both nframe = 8 and fps = 1.0; the runner keeps the one the dataset uses and
clears the other. run.py builds one model object and passes it from dataset to dataset, so after
each answer the class puts a cleared attribute back (its last value, else its default): the next
dataset, nframe or fps, finds both set again. Called without the runner, nframe wins when both are
set.

The frames are the `vlmevalkit` loader's by default (docs/loaders.md): what VLMEvalKit's own
save_video_frames (vlmeval/dataset/video_base.py) writes and a model reads back — decord's frames of
FFmpeg's best stream, rotated, at its indices, through a JPEG q75 file. On a server whose /v1/health
lists no loaders, the `vlmevalkit` preset through the cached (JPEG q75) pipeline instead (the same
indices; framesweep's stream, colours and rotation), with a warning. loader=, preset= or policy= name
another configuration.

Interface followed (`vlmeval/vlm/base.py`): a subclass of `vlmeval.vlm.base.BaseModel` with
`generate_inner(message, dataset=None)`, message a list of {'type': 'text'|'image'|'video', 'value'};
`generate` (the base class's) checks the types against allowed_types and calls it.
"""

import logging
import os

from vlmeval.vlm.base import BaseModel

from ._args import config_from
from .backends import frames_to_images, make_answer, server_config
from .client import Client

log = logging.getLogger("framesweep")

_MIME = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp", ".gif": "image/gif", ".bmp": "image/bmp"}


class FramesweepVideoLLM(BaseModel):
    """VLMEvalKit video model: frames from framesweep, answers from `answer` (OpenAI-compatible by
    default). nframe / fps are the budget: both start set (8 frames, 1 fps) so that VLMEvalKit's runner
    can hand over either the dataset's nframe or its fps (see the module docstring); the other
    configuration fields (loader — the `vlmevalkit` loader by default — or preset, resolution, kernel, …)
    are keyword arguments."""

    INSTALL_REQ = False
    INTERLEAVE = True
    VIDEO_LLM = True
    allowed_types = ["text", "image", "video"]

    def __init__(self, url=None, token_file=None, nframe=8, fps=1.0, api_base=None, api_model=None, api_key_env="OPENAI_API_KEY",
                 answer=None, max_new_tokens=512, timeout=600, **kwargs):
        self.config = config_from(kwargs)
        unknown = sorted(set(kwargs) - set(self.config))
        if unknown:
            raise TypeError("framesweep: unknown arguments %s" % ", ".join(unknown))
        if "frames" in self.config or "sample_fps" in self.config:
            raise TypeError("framesweep: give the budget as nframe or fps (VLMEvalKit's names)")
        if not any(k in self.config for k in ("loader", "preset", "policy")):
            self.config["loader"] = "vlmevalkit"  # VLMEvalKit's own frames (video_base.py): server_config falls back
        if "loader" not in self.config:
            self.config.setdefault("pipeline", "cached")  # a preset or policy: with VLMEvalKit's JPEG q75 frame cache
        self.nframe = nframe
        self.fps = fps
        self._last = {"nframe": nframe, "fps": fps}  # what a cleared attribute goes back to
        self.client = Client(url, token_file=token_file, timeout=float(timeout))
        self.answer = make_answer(answer, api_base, api_model, api_key_env, float(timeout), int(max_new_tokens))
        self.max_new_tokens = int(max_new_tokens)
        self.inputs = []  # per generate call: the framesweep inputs used
        self._server_config = None

    def budget(self):
        """The request's budget from nframe / fps as the runner left them (nframe first)."""
        if self.nframe:
            return {"frames": int(self.nframe)}
        if self.fps:
            return {"sample_fps": float(self.fps)}
        return {}

    def request_config(self):
        if self._server_config is None:
            self._server_config = server_config(self.client, self.config, log)
        return self._server_config

    def generate_inner(self, message, dataset=None):
        parts, used = [], []
        for item in message:
            kind, value = item["type"], item["value"]
            if kind == "text":
                parts.append(value)
            elif kind == "video":
                budget = self.budget()
                frames, meta = self.client.frames(os.fspath(value), **self.request_config(), **budget)
                parts.extend(frames_to_images(frames))
                used.append({"video": value, "key": meta.get("key"), "config": meta.get("request_config"), "budget": budget,
                             "loader": self.request_config().get("loader"),
                             "indices": meta.get("indices"), "frames_sha256": meta.get("frames_sha256"), "shape": list(frames.shape)})
            elif kind == "image":
                ext = os.path.splitext(value)[1].lower()
                with open(value, "rb") as f:
                    parts.append((_MIME.get(ext, "image/jpeg"), f.read()))
            else:
                raise ValueError("framesweep: unsupported message part %r" % kind)
        self.inputs.append({"dataset": dataset, "inputs": used})
        try:
            return self.answer(parts, {"max_new_tokens": self.max_new_tokens})
        finally:
            self._restore_budget()

    def _restore_budget(self):
        """Put back the attribute VLMEvalKit's runner cleared for this dataset (see the module doc)."""
        for k in ("nframe", "fps"):
            v = getattr(self, k)
            if v:
                self._last[k] = v
            elif self._last[k]:
                setattr(self, k, self._last[k])
