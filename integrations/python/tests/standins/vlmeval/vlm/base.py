"""Stand-in for vlmeval.vlm.base (see ../../README.md)."""

from abc import abstractmethod


class BaseModel:
    INTERLEAVE = False
    allowed_types = ["text", "image"]

    def use_custom_prompt(self, dataset):
        return False

    @abstractmethod
    def generate_inner(self, message, dataset=None):
        raise NotImplementedError

    def _preproc(self, inputs):
        if isinstance(inputs, str):
            return [dict(type="text", value=inputs)]
        if isinstance(inputs, dict):
            return [inputs]
        if isinstance(inputs, list) and all(isinstance(m, dict) and "type" in m and "value" in m for m in inputs):
            return inputs
        if isinstance(inputs, list) and all(isinstance(m, str) for m in inputs):
            return [dict(type="text", value=m) for m in inputs]  # upstream guesses file types by MIME
        return None

    def generate(self, message, dataset=None):
        message = self._preproc(message)
        assert message is not None, "Invalid input type"
        for item in message:
            assert item["type"] in self.allowed_types, "Invalid input type: %s" % item["type"]
        return self.generate_inner(message, dataset)
