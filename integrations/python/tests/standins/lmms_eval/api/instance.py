"""Stand-in for lmms_eval.api.instance (see ../../README.md)."""

from dataclasses import dataclass, field


@dataclass
class Instance:
    request_type: str
    arguments: tuple
    idx: int
    metadata: dict = field(default_factory=dict)

    @property
    def args(self):
        return self.arguments
