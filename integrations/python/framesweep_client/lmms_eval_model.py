"""An lmms-eval model whose frames come from `framesweep serve`.

lmms-eval (EvolvingLMMs-Lab/lmms-eval) finds it through the `lmms_eval.models` entry-point group
(pyproject.toml → framesweep_client.lmms_eval_plugin:manifest), so after `pip install
integrations/python`:

    python -m lmms_eval --model framesweep \\
        --model_args url=http://127.0.0.1:8765,preset=lmms-eval,frames=16,resolution=448x448,api_base=http://127.0.0.1:8000/v1,api_model=Qwen/Qwen2.5-VL-7B-Instruct \\
        --tasks videomme --log_samples --output_path logs/

Each request's `doc_to_visual` gives the task's video paths; the adapter asks framesweep for the
configured frames of each (the paths must lie under a --root of the server), sends them with the
prompt to `answer` (default: an OpenAI-compatible server, frames as lossless PNG), and keeps the
framesweep key, config, indices and frames digest of every input it used (`inputs`, and one JSON line
per document in inputs_log=PATH), so a harness log can be joined with framesweep's provenance.

Interface followed (lmms-eval `lmms_eval/api/model.py` and `docs/guides/model_guide.md`): a subclass
of `lmms_eval.api.model.lmms` with `is_simple = True`; `generate_until(requests)` where each
`request.args` is `(context, gen_kwargs, doc_to_visual, doc_id, task, split)` and the visuals are
`doc_to_visual(self.task_dict[task][split][doc_id])`; `loglikelihood` and
`generate_until_multi_round` are not supported by this adapter.
"""

import json
import os

import numpy as np
from lmms_eval.api.model import lmms

from ._args import config_from
from .backends import frames_to_images, make_answer
from .client import Client


def _flatten(v):
    if isinstance(v, (list, tuple)):
        for x in v:
            yield from _flatten(x)
    elif v is not None:
        yield v


class FramesweepLMMS(lmms):
    """lmms-eval model: frames from framesweep, answers from `answer` (OpenAI-compatible by default).

    Arguments (lmms-eval --model_args): url, token_file; the configuration fields of
    framesweep_client.CONFIG_FIELDS (preset or policy, frames or sample_fps, resolution, pipeline, …);
    api_base, api_model, api_key_env (the answering server), or answer=module:function; max_new_tokens,
    timeout, inputs_log, text_first (put the prompt before the frames)."""

    is_simple = True

    def __init__(self, url=None, token_file=None, api_base=None, api_model=None, api_key_env="OPENAI_API_KEY", answer=None,
                 max_new_tokens=16, timeout=600, inputs_log=None, text_first=False, batch_size=1, **kwargs):
        super().__init__()
        self.config = config_from(kwargs)
        unknown = sorted(set(kwargs) - set(self.config) - {"device", "device_map"})
        if unknown:
            raise TypeError("framesweep: unknown model_args %s" % ", ".join(unknown))
        if "preset" not in self.config and "policy" not in self.config:
            self.config["preset"] = "lmms-eval"  # lmms-eval's own read_video sampling
        self.client = Client(url, token_file=token_file, timeout=float(timeout))
        self.answer = make_answer(answer, api_base, api_model, api_key_env, float(timeout), int(max_new_tokens))
        self.model_name = "framesweep:" + (api_model or (answer if isinstance(answer, str) else "custom"))
        self.inputs_log = inputs_log
        self.text_first = str(text_first).lower() in ("1", "true", "yes")
        self.batch_size_per_gpu = int(batch_size)
        self.inputs = []  # per document: the framesweep inputs it was answered from

    def _visual_parts(self, visuals):
        parts, used = [], []
        for vis in _flatten(visuals):
            if isinstance(vis, (str, os.PathLike)):
                frames, meta = self.client.frames(os.fspath(vis), **self.config)
                parts.extend(frames_to_images(frames))
                used.append({"video": os.fspath(vis), "key": meta.get("key"), "config": meta.get("request_config"),
                             "indices": meta.get("indices"), "frames_sha256": meta.get("frames_sha256"), "shape": list(frames.shape)})
            elif hasattr(vis, "convert"):  # a PIL image from an image task
                parts.append(np.asarray(vis.convert("RGB")))
            else:
                raise TypeError("framesweep: a visual of type %s is neither a path nor an image" % type(vis).__name__)
        return parts, used

    def generate_until(self, requests):
        out = []
        for req in requests:
            context, gen_kwargs, doc_to_visual, doc_id, task, split = req.args
            visuals = doc_to_visual(self.task_dict[task][split][doc_id]) if doc_to_visual is not None else []
            parts, used = self._visual_parts(visuals)
            parts = [context] + parts if self.text_first else parts + [context]
            text = self.answer(parts, gen_kwargs)
            rec = {"task": task, "split": split, "doc_id": doc_id, "inputs": used}
            self.inputs.append(rec)
            if self.inputs_log:
                with open(self.inputs_log, "a", encoding="utf-8") as f:
                    f.write(json.dumps(rec) + "\n")
            self.cache_hook.add_partial("generate_until", (context, gen_kwargs), text)
            out.append(text)
        return out

    def loglikelihood(self, requests):
        raise NotImplementedError("framesweep: loglikelihood is not supported (generation tasks only)")

    def generate_until_multi_round(self, requests):
        raise NotImplementedError("framesweep: multi-round generation is not supported")
