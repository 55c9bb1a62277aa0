"""A VLMEvalKit video model whose frames come from `framesweep serve`.

VLMEvalKit (open-compass/VLMEvalKit) builds models from `vlmeval.config.supported_VLM`, a dict of
constructors; register this class there (or in a launcher that imports vlmeval first):

    from functools import partial
    from vlmeval.config import supported_VLM
    from framesweep_client.vlmevalkit_model import FramesweepVideoLLM
    supported_VLM["framesweep-qwen2.5-vl"] = partial(FramesweepVideoLLM, url="http://127.0.0.1:8765",
        api_base="http://127.0.0.1:8000/v1", api_model="Qwen/Qwen2.5-VL-7B-Instruct")

then `python run.py --data Video-MME_8frame --model framesweep-qwen2.5-vl`. With VIDEO_LLM = True the
video datasets send the video path itself ({'type': 'video', 'value': PATH}); the class asks framesweep
for nframe frames (or fps, when the dataset is in fps mode: the runner sets model.nframe / model.fps
from the dataset, vlmeval/inference_video.py) under the `vlmevalkit` preset through the cached (JPEG
q75) pipeline by default, which is how VLMEvalKit itself samples and caches frames
(vlmeval/dataset/video_base.py). The paths must lie under a --root of the server.

Interface followed (`vlmeval/vlm/base.py`): a subclass of `vlmeval.vlm.base.BaseModel` with
`generate_inner(message, dataset=None)`, message a list of {'type': 'text'|'image'|'video', 'value'};
`generate` (the base class's) checks the types against allowed_types and calls it.
"""

import os

from vlmeval.vlm.base import BaseModel

from ._args import config_from
from .backends import frames_to_images, make_answer
from .client import Client

_MIME = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp", ".gif": "image/gif", ".bmp": "image/bmp"}


class FramesweepVideoLLM(BaseModel):
    """VLMEvalKit video model: frames from framesweep, answers from `answer` (OpenAI-compatible by
    default). nframe / fps are the budget (the runner overrides them from the dataset); the other
    configuration fields (preset, resolution, pipeline, kernel, …) are keyword arguments."""

    INSTALL_REQ = False
    INTERLEAVE = True
    VIDEO_LLM = True
    allowed_types = ["text", "image", "video"]

    def __init__(self, url=None, token_file=None, nframe=8, fps=None, api_base=None, api_model=None, api_key_env="OPENAI_API_KEY",
                 answer=None, max_new_tokens=512, timeout=600, **kwargs):
        self.config = config_from(kwargs)
        unknown = sorted(set(kwargs) - set(self.config))
        if unknown:
            raise TypeError("framesweep: unknown arguments %s" % ", ".join(unknown))
        if "frames" in self.config or "sample_fps" in self.config:
            raise TypeError("framesweep: give the budget as nframe or fps (VLMEvalKit's names)")
        if "preset" not in self.config and "policy" not in self.config:
            self.config["preset"] = "vlmevalkit"  # VLMEvalKit's own sampling (video_base.py)
        self.config.setdefault("pipeline", "cached")  # and its JPEG q75 frame cache
        self.nframe = nframe
        self.fps = fps
        self.client = Client(url, token_file=token_file, timeout=float(timeout))
        self.answer = make_answer(answer, api_base, api_model, api_key_env, float(timeout), int(max_new_tokens))
        self.max_new_tokens = int(max_new_tokens)
        self.inputs = []  # per generate call: the framesweep inputs used

    def budget(self):
        """The request's budget from nframe / fps as the runner left them."""
        if self.nframe:
            return {"frames": int(self.nframe)}
        if self.fps:
            return {"sample_fps": float(self.fps)}
        return {}

    def generate_inner(self, message, dataset=None):
        parts, used = [], []
        for item in message:
            kind, value = item["type"], item["value"]
            if kind == "text":
                parts.append(value)
            elif kind == "video":
                frames, meta = self.client.frames(os.fspath(value), **self.config, **self.budget())
                parts.extend(frames_to_images(frames))
                used.append({"video": value, "key": meta.get("key"), "config": meta.get("request_config"),
                             "indices": meta.get("indices"), "frames_sha256": meta.get("frames_sha256"), "shape": list(frames.shape)})
            elif kind == "image":
                ext = os.path.splitext(value)[1].lower()
                with open(value, "rb") as f:
                    parts.append((_MIME.get(ext, "image/jpeg"), f.read()))
            else:
                raise ValueError("framesweep: unsupported message part %r" % kind)
        self.inputs.append({"dataset": dataset, "inputs": used})
        return self.answer(parts, {"max_new_tokens": self.max_new_tokens})
