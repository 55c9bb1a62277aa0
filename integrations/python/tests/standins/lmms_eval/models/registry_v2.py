"""Stand-in for lmms_eval.models.registry_v2 (see ../../README.md)."""

import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points


@dataclass(frozen=True)
class ModelManifest:
    model_id: str
    simple_class_path: str = None
    chat_class_path: str = None
    aliases: tuple = ()

    def __post_init__(self):
        if self.simple_class_path is None and self.chat_class_path is None:
            raise ValueError("ModelManifest(%r) requires at least one class path" % self.model_id)


class ModelRegistryV2:
    def __init__(self):
        self.manifests = {}
        self.names = {}

    def register_manifest(self, m):
        if m.model_id in self.manifests and self.manifests[m.model_id] != m:
            raise ValueError("conflicting manifest for %r" % m.model_id)
        self.manifests[m.model_id] = m
        for n in (m.model_id, *m.aliases):
            self.names[n] = m.model_id

    def load_entrypoint_manifests(self, group="lmms_eval.models"):
        failures = []
        for ep in sorted(entry_points().select(group=group), key=lambda e: e.name):
            try:
                payload = ep.load()
                if callable(payload):
                    payload = payload()
                items = [payload] if isinstance(payload, ModelManifest) else list(payload)
                for m in items:
                    if not isinstance(m, ModelManifest):
                        raise TypeError("entry point payload must be ModelManifest")
                    self.register_manifest(m)
            except Exception as exc:  # the upstream registry collects failures too
                failures.append((ep.name, type(exc).__name__, str(exc)))
        return tuple(failures)

    def get_model_class(self, name, force_simple=False):
        m = self.manifests[self.names[name]]
        chat = m.chat_class_path is not None and not force_simple
        path = m.chat_class_path if chat else m.simple_class_path
        mod, _, cls_name = path.rpartition(".")
        cls = getattr(importlib.import_module(mod), cls_name)
        from lmms_eval.api.model import lmms

        if not (isinstance(cls, type) and issubclass(cls, lmms)):
            raise TypeError("%s is not a subclass of lmms" % path)
        if getattr(cls, "is_simple", True) == chat:
            raise TypeError("%s: is_simple does not match its registration" % path)
        return cls
