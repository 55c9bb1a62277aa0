"""What answers a question once the frames are at hand: the adapters call answer(parts, gen_kwargs)
-> str, where parts is the prompt in order (str for text, an [H, W, 3] uint8 array for a frame,
(mime, bytes) for an encoded image file). OpenAIChat is the default; answer="module:function" in the
adapters' arguments names any other callable with that signature (a local model, a test double)."""

import base64
import importlib
import json
import os
import urllib.request

import numpy as np

from .png import encode_png


def load_callable(spec):
    """The callable named "package.module:attribute"."""
    mod, sep, attr = spec.partition(":")
    if not sep or not mod or not attr:
        raise ValueError("answer=%r: want 'module:function'" % spec)
    obj = importlib.import_module(mod)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError("answer=%r is not callable" % spec)
    return obj


def frames_to_images(frames):
    """A frames tensor ([N, H, W, 3] or tiles [N, images, H, W, 3]) as a list of [H, W, 3] images in
    tensor order (tiles then thumbnail per frame, as the model receives them)."""
    a = np.asarray(frames)
    if a.dtype != np.uint8:
        raise ValueError("images need uint8 frames (request dtype u8), got %s" % a.dtype)
    return list(a.reshape((-1,) + a.shape[-3:]))


class OpenAIChat:
    """Answers through an OpenAI-compatible /chat/completions endpoint (vLLM, SGLang, llama-server,
    ollama): one user message whose content is the parts in order, frames as lossless PNG data URIs,
    sampling parameters sent explicitly (temperature 0 unless gen_kwargs say otherwise)."""

    def __init__(self, api_base, model, api_key=None, timeout=600.0, max_tokens=16, seed=None):
        if not api_base or not model:
            raise ValueError("OpenAIChat needs api_base (e.g. http://127.0.0.1:8000/v1) and model")
        self.api_base = api_base.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = float(timeout)
        self.max_tokens = int(max_tokens)
        self.seed = seed

    def content(self, parts):
        out = []
        for p in parts:
            if isinstance(p, str):
                out.append({"type": "text", "text": p})
            elif isinstance(p, tuple):
                mime, data = p
                out.append({"type": "image_url", "image_url": {"url": "data:%s;base64,%s" % (mime, base64.b64encode(data).decode("ascii"))}})
            else:
                png = encode_png(p)
                out.append({"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode("ascii")}})
        return out

    def _post(self, body):
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        req = urllib.request.Request(self.api_base + "/chat/completions", data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
        with urllib.request.urlopen(req, timeout=self.timeout) as res:
            return json.loads(res.read())

    def loglikelihood(self, parts, continuation):
        """(log P(continuation | parts), whether every continuation token is the greedy one), from a
        server that returns prompt logprobs: vLLM's chat completions with prompt_logprobs=0 (the prompt
        tokens' own logprob and rank), the continuation as the final assistant message
        (continue_final_message, no generation prompt). Its tokens are the last prompt tokens: their
        number is the difference in prompt_tokens with an empty continuation (two requests, as
        lmms-eval's HF models split context and continuation by token counts). Raises
        NotImplementedError when the server returns no prompt_logprobs."""
        def body(text):
            return {"model": self.model, "max_tokens": 1, "temperature": 0.0,
                    "messages": [{"role": "user", "content": self.content(parts)}, {"role": "assistant", "content": text}],
                    "prompt_logprobs": 0, "add_generation_prompt": False, "continue_final_message": True}

        base = self._post(body(""))
        full = self._post(body(continuation))
        plp = full.get("prompt_logprobs")
        if not plp:
            raise NotImplementedError("the server at %s returned no prompt_logprobs (it needs vLLM's prompt_logprobs)" % self.api_base)
        n = int(full["usage"]["prompt_tokens"]) - int(base["usage"]["prompt_tokens"])
        if n <= 0 or n > len(plp):
            raise ValueError("the continuation %r adds %d prompt tokens" % (continuation, n))
        total, greedy = 0.0, True
        for entry in plp[len(plp) - n:]:
            if not entry or len(entry) != 1:
                raise ValueError("want exactly the prompt token's own logprob per position (prompt_logprobs=0), got %r" % (entry,))
            (tok,) = entry.values()
            total += float(tok["logprob"])
            greedy = greedy and int(tok.get("rank", 1)) == 1
        return total, greedy

    def __call__(self, parts, gen_kwargs=None):
        g = dict(gen_kwargs or {})
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": self.content(parts)}],
            "temperature": float(g.get("temperature", 0.0) if g.get("do_sample") else 0.0),
            "top_p": float(g.get("top_p", 1.0)),
            "max_tokens": int(g.get("max_new_tokens", self.max_tokens)),
        }
        until = g.get("until")
        if isinstance(until, str):
            until = [until]
        if until:
            body["stop"] = list(until)[:4]
        if self.seed is not None:
            body["seed"] = int(self.seed)
        out = self._post(body)
        return out["choices"][0]["message"]["content"] or ""


def make_answer(answer=None, api_base=None, api_model=None, api_key_env="OPENAI_API_KEY", timeout=600.0, max_new_tokens=16, seed=None):
    """The adapters' answer callable: answer itself (a callable or "module:function"), else OpenAIChat."""
    if callable(answer):
        return answer
    if isinstance(answer, str) and answer:
        return load_callable(answer)
    return OpenAIChat(api_base or os.environ.get("OPENAI_API_BASE"), api_model, api_key=os.environ.get(api_key_env) if api_key_env else None,
                      timeout=timeout, max_tokens=max_new_tokens, seed=seed)


# Loaders a server without loader support can approximate with the preset that plans the same indices
# (same sampling, framesweep's stream/colour/rotation: docs/loaders.md says how they differ).
_PRESET_FOR_LOADER = {"lmms-eval": {"preset": "lmms-eval"}, "vlmevalkit": {"preset": "vlmevalkit", "pipeline": "cached"}}


def server_config(client, config, log):
    """config as this server takes it: a "loader" the server builds is sent as is; otherwise it is
    replaced by the preset that plans the same indices, with a warning (log.warning) that the pixels
    are framesweep's, not the harness reader's; a loader without such a preset is refused."""
    name = config.get("loader")
    if not name or name in client.loaders():
        return config
    sub = _PRESET_FOR_LOADER.get(name)
    if sub is None:
        raise ValueError("framesweep: the server does not build loader %r (its /v1/health lists %r)" % (name, client.loaders()))
    out = {k: v for k, v in config.items() if k != "loader"}
    for k, v in sub.items():
        out.setdefault(k, v)
    log.warning("framesweep: the server has no %r loader; using preset %r (the same frame indices; stream, colour "
                "conversion and rotation are framesweep's, not the harness reader's: docs/loaders.md)", name, out["preset"])
    return out

