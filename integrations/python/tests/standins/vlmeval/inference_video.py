"""Stand-in for vlmeval.inference_video (see ../README.md): the per-sample part of infer_data for a
non-API model, written from open-compass/VLMEvalKit vlmeval/inference_video.py (not copied): the
dataset's nframe/fps handed to the model's attributes, then dataset.build_prompt and model.generate."""


def apply_dataset_budget(model, dataset, model_name="model"):
    """What infer_data does to model.nframe / model.fps before each sample."""
    if getattr(model, "nframe", None) is not None and getattr(model, "nframe", 0) > 0:
        if dataset.nframe > 0:
            if getattr(model, "nframe", 0) != dataset.nframe:
                model.nframe = dataset.nframe
        elif getattr(model, "fps", 0) == 0:
            raise ValueError("fps is not suitable for %s" % model_name)
        else:
            model.nframe = None
    if getattr(model, "fps", None) is not None and getattr(model, "fps", 0) > 0:
        if dataset.fps > 0:
            if getattr(model, "fps", 0) != dataset.fps:
                model.fps = dataset.fps
        elif getattr(model, "nframe", 0) == 0:
            raise ValueError("nframe is not suitable for %s" % model_name)
        else:
            model.fps = None


def infer_data(model, model_name, dataset):
    """Answers for every sample of dataset ({index: response}), as the upstream loop produces them."""
    res = {}
    for idx in range(len(dataset)):
        apply_dataset_budget(model, dataset, model_name)
        struct = dataset.build_prompt(idx, video_llm=getattr(model, "VIDEO_LLM", False))
        res[idx] = model.generate(message=struct, dataset=dataset.dataset_name)
    return res
