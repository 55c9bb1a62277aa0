"""An lmms-eval model whose frames come from `framesweep serve`.

lmms-eval (EvolvingLMMs-Lab/lmms-eval) finds it through the `lmms_eval.models` entry-point group
(pyproject.toml → framesweep_client.lmms_eval_plugin:manifest), so after `pip install
integrations/python`:

    python -m lmms_eval --model framesweep \\
        --model_args url=http://127.0.0.1:8765,frames=16,api_base=http://127.0.0.1:8000/v1,api_model=Qwen/Qwen2.5-VL-7B-Instruct \\
        --tasks videomme --log_samples --output_path logs/

Each request's `doc_to_visual` gives the task's video paths; the adapter asks framesweep for the
configured frames of each (by default the `lmms-eval` loader: the frames lmms-eval's own read_video
returns, docs/loaders.md) (the paths must lie under a --root of the server), sends them with the
prompt to `answer` (default: an OpenAI-compatible server, frames as lossless PNG), and keeps the
framesweep key, config, indices and frames digest of every input it used (`inputs`, and one JSON line
per document in inputs_log=PATH), so a harness log can be joined with framesweep's provenance.

Interface followed (lmms-eval `lmms_eval/api/model.py` and `docs/guides/model_guide.md`): a subclass
of `lmms_eval.api.model.lmms` with `is_simple = True`; `generate_until(requests)` where each
`request.args` is `(context, gen_kwargs, doc_to_visual, doc_id, task, split)` and the visuals are
`doc_to_visual(self.task_dict[task][split][doc_id])`; `loglikelihood(requests)` where each
`request.args` is `(context, doc_to_target, doc_to_visual, doc_id, task, split)` and the answer is
`(log P(doc_to_target(doc) | context, visuals), is_greedy)`. The evaluator builds the model with
`create_from_arg_string(model_args, {"batch_size", "max_batch_size", "device"})` (the entries it
has); those are accepted and, where meaningless here, ignored with a log line.
`generate_until_multi_round` is not supported.
"""

import json
import logging
import os

import numpy as np
from lmms_eval.api.model import lmms

from ._args import config_from
from .backends import frames_to_images, make_answer, server_config
from .client import Client

log = logging.getLogger("framesweep")

# Model arguments lmms-eval's evaluator passes to every model (create_from_arg_string's
# additional_config) or that launch scripts pass to local models: meaningless for a model whose frames
# come from framesweep and whose answers come from a server.
_IGNORED = ("max_batch_size", "device", "device_map")


def _flatten(v):
    if isinstance(v, (list, tuple)):
        for x in v:
            yield from _flatten(x)
    elif v is not None:
        yield v


class FramesweepLMMS(lmms):
    """lmms-eval model: frames from framesweep, answers from `answer` (OpenAI-compatible by default).

    Arguments (lmms-eval --model_args): url, token_file; the configuration fields of
    framesweep_client.CONFIG_FIELDS (loader, or preset or policy; frames or sample_fps, resolution,
    pipeline, …); api_base, api_model, api_key_env (the answering server), or answer=module:function;
    max_new_tokens, timeout, inputs_log, text_first (put the prompt before the frames). Without
    loader/preset/policy the frames are the `lmms-eval` loader's: what lmms-eval's own read_video
    returns (docs/loaders.md); on a server without loaders, the `lmms-eval` preset's indices with a
    warning. batch_size, max_batch_size, device and device_map are accepted and ignored (logged):
    requests go one at a time to framesweep and to the answering server."""

    is_simple = True

    def __init__(self, url=None, token_file=None, api_base=None, api_model=None, api_key_env="OPENAI_API_KEY", answer=None,
                 max_new_tokens=16, timeout=600, inputs_log=None, text_first=False, batch_size=1, **kwargs):
        super().__init__()
        self.config = config_from(kwargs)
        for k in _IGNORED:
            if k in kwargs:
                log.info("framesweep: model arg %s=%r ignored (frames come from framesweep serve, answers from a server)", k, kwargs[k])
        unknown = sorted(set(kwargs) - set(self.config) - set(_IGNORED))
        if unknown:
            raise TypeError("framesweep: unknown model_args %s" % ", ".join(unknown))
        if str(batch_size) not in ("1", "None", "auto"):
            log.info("framesweep: batch_size=%s: requests are answered one at a time", batch_size)
        if not any(k in self.config for k in ("loader", "preset", "policy")):
            self.config["loader"] = "lmms-eval"  # lmms-eval's own read_video (docs/loaders.md)
        self.client = Client(url, token_file=token_file, timeout=float(timeout))
        self.answer = make_answer(answer, api_base, api_model, api_key_env, float(timeout), int(max_new_tokens))
        self.model_name = "framesweep:" + (api_model or (answer if isinstance(answer, str) else "custom"))
        self.inputs_log = inputs_log
        self.text_first = str(text_first).lower() in ("1", "true", "yes")
        self.batch_size_per_gpu = int(batch_size) if str(batch_size).isdigit() else 1
        self.inputs = []  # per document: the framesweep inputs it was answered from
        self._server_config = None

    def request_config(self):
        """The configuration sent to the server (a loader it lacks becomes its preset, once)."""
        if self._server_config is None:
            self._server_config = server_config(self.client, self.config, log)
        return self._server_config

    def _visual_parts(self, visuals):
        parts, used = [], []
        for vis in _flatten(visuals):
            if isinstance(vis, (str, os.PathLike)):
                frames, meta = self.client.frames(os.fspath(vis), **self.request_config())
                parts.extend(frames_to_images(frames))
                used.append({"video": os.fspath(vis), "key": meta.get("key"), "config": meta.get("request_config"),
                             "loader": self.request_config().get("loader"), "indices": meta.get("indices"),
                             "frames_sha256": meta.get("frames_sha256"), "shape": list(frames.shape)})
            elif hasattr(vis, "convert"):  # a PIL image from an image task
                parts.append(np.asarray(vis.convert("RGB")))
            else:
                raise TypeError("framesweep: a visual of type %s is neither a path nor an image" % type(vis).__name__)
        return parts, used

    def _record(self, rec):
        self.inputs.append(rec)
        if self.inputs_log:
            with open(self.inputs_log, "a", encoding="utf-8") as f:
                f.write(json.dumps(rec) + "\n")

    def generate_until(self, requests):
        out = []
        for req in requests:
            context, gen_kwargs, doc_to_visual, doc_id, task, split = req.args
            visuals = doc_to_visual(self.task_dict[task][split][doc_id]) if doc_to_visual is not None else []
            parts, used = self._visual_parts(visuals)
            parts = [context] + parts if self.text_first else parts + [context]
            text = self.answer(parts, gen_kwargs)
            self._record({"task": task, "split": split, "doc_id": doc_id, "inputs": used})
            self.cache_hook.add_partial("generate_until", (context, gen_kwargs), text)
            out.append(text)
        return out

    def loglikelihood(self, requests):
        """(loglikelihood, is_greedy) of each request's continuation, from a server that returns prompt
        logprobs (vLLM: OpenAIChat.loglikelihood). A backend without that is refused with the task's name."""
        score = getattr(self.answer, "loglikelihood", None)
        out = []
        for req in requests:
            context, doc_to_target, doc_to_visual, doc_id, task, split = req.args
            if score is None:
                raise NotImplementedError("framesweep: task %r asks for loglikelihood, and the answering backend %r cannot score a "
                                          "continuation: give api_base/api_model of a server that returns prompt logprobs (vLLM)" % (task, self.answer))
            doc = self.task_dict[task][split][doc_id]
            continuation = doc_to_target(doc) if callable(doc_to_target) else doc_to_target
            visuals = doc_to_visual(doc) if doc_to_visual is not None else []
            parts, used = self._visual_parts(visuals)
            parts = [context] + parts if self.text_first else parts + [context]
            try:
                ll, greedy = score(parts, str(continuation))
            except NotImplementedError as e:
                raise NotImplementedError("framesweep: task %r asks for loglikelihood: %s" % (task, e)) from None
            self._record({"task": task, "split": split, "doc_id": doc_id, "inputs": used, "continuation": str(continuation)})
            self.cache_hook.add_partial("loglikelihood", (context, str(continuation)), (ll, greedy))
            out.append((ll, greedy))
        return out

    def generate_until_multi_round(self, requests):
        raise NotImplementedError("framesweep: multi-round generation is not supported")
