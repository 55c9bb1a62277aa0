"""The `lmms_eval.models` entry point: lmms-eval's registry (lmms_eval/models/registry_v2.py,
load_entrypoint_manifests) loads this callable and registers the ModelManifest it returns. Importing
this module needs nothing; calling manifest() needs lmms-eval, and the model class is imported only
when lmms-eval resolves the name "framesweep"."""


def manifest():
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(model_id="framesweep", simple_class_path="framesweep_client.lmms_eval_model.FramesweepLMMS")
