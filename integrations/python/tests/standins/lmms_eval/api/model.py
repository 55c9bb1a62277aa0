"""Stand-in for lmms_eval.api.model (see ../../README.md)."""

import abc


class CacheHook:
    def __init__(self, cachinglm):
        self.partials = []  # stand-in only: what the model reported, for the test to check

    def add_partial(self, attr, req, res):
        self.partials.append((attr, req, res))


def _value(v):
    lv = v.lower()
    if lv == "true":
        return True
    if lv == "false":
        return False
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


class lmms(abc.ABC):
    is_simple = True

    def __init__(self):
        self._rank = 0
        self._world_size = 1
        self.cache_hook = CacheHook(None)
        self.task_dict = {}

    @abc.abstractmethod
    def loglikelihood(self, requests):
        pass

    @abc.abstractmethod
    def generate_until(self, requests):
        pass

    @abc.abstractmethod
    def generate_until_multi_round(self, requests):
        pass

    @classmethod
    def create_from_arg_string(cls, arg_string, additional_config=None):
        args = {}
        for kv in arg_string.split(","):
            if kv.strip():
                k, _, v = kv.partition("=")
                args[k.strip()] = _value(v.strip())
        extra = {k: v for k, v in (additional_config or {}).items() if v is not None}
        return cls(**args, **extra)

    @property
    def rank(self):
        return self._rank

    @property
    def world_size(self):
        return self._world_size
