"""Run by cmd/framesweep's TestServePython: the lmms-eval adapter, found through the installed
`lmms_eval.models` entry point by the (stand-in) registry, and the VLMEvalKit class, driven as their
harnesses drive them, against a real `framesweep serve` and a stand-in OpenAI-compatible server that
reports what images it received. Prints a JSON summary; exits 1 on a failed check."""

import json
import os
import sys

import openai_standin


def check(cond, msg):
    if not cond:
        print("FAIL: " + msg, file=sys.stderr)
        sys.exit(1)


def main():
    exp = json.load(open(os.environ["FRAMESWEEP_EXPECT"]))
    url, video = os.environ["FRAMESWEEP_URL"], exp["video"]
    token_file = os.environ.get("FRAMESWEEP_TOKEN_FILE", "")
    srv, api_base = openai_standin.start()
    out = {}

    # lmms-eval: entry point → manifest → class, built from a --model_args string.
    from lmms_eval.api.instance import Instance
    from lmms_eval.models.registry_v2 import ModelRegistryV2

    reg = ModelRegistryV2()
    failures = reg.load_entrypoint_manifests()
    check(failures == (), "entry point failures %r" % (failures,))
    cls = reg.get_model_class("framesweep")
    import framesweep_client

    check(os.path.dirname(framesweep_client.__file__).startswith(os.environ["FRAMESWEEP_SITE"]), "not the installed package: %s" % framesweep_client.__file__)
    le = exp["lmms_eval"]
    args = "url=%s,token_file=%s,preset=%s,frames=%d,resolution=%s,api_base=%s,api_model=test-model" % (url, token_file, le["preset"], le["frames"], le["resolution"], api_base)
    model = cls.create_from_arg_string(args)
    model.task_dict = {"videomme": {"test": {0: {"videoID": "v0", "path": video}}}}
    gen = {"until": ["\n\n"], "max_new_tokens": 8, "temperature": 0, "do_sample": False}
    req = Instance("generate_until", ("Which happens first?\nA. x\nB. y\nAnswer with the option's letter.", gen, lambda doc: [doc["path"]], 0, "videomme", "test"), 0)
    (resp,) = model.generate_until([req])
    got = json.loads(resp)
    check(got["images"] == le["frames"] and got["sha256"] == le["frames_sha256"], "lmms-eval: the model saw %r, framesweep's frames are %r" % (got, le))
    check(got["order"][-1] == "text" and got["texts"] == [req.args[0]] and got["temperature"] == 0 and got["max_tokens"] == 8 and got["stop"] == ["\n\n"], "lmms-eval request %r" % got)
    inp = model.inputs[0]["inputs"][0]
    check(inp["key"] == le["key"] and inp["frames_sha256"] == le["frames_sha256"] and inp["config"] == le["config"], "lmms-eval inputs %r" % inp)
    check(model.cache_hook.partials and model.cache_hook.partials[0][2] == resp, "cache hook not told")
    for bad in ("loglikelihood", "generate_until_multi_round"):
        try:
            getattr(model, bad)([req])
            check(False, bad + " did not refuse")
        except NotImplementedError:
            pass
    out["lmms_eval"] = {"answer": got, "input": inp}

    # VLMEvalKit: the class as supported_VLM would build it; the runner sets nframe from the dataset.
    from framesweep_client.vlmevalkit_model import FramesweepVideoLLM

    ve = exp["vlmevalkit"]
    m = FramesweepVideoLLM(url=url, token_file=token_file or None, api_base=api_base, api_model="test-model", resolution=ve["resolution"])
    check(m.VIDEO_LLM and "video" in m.allowed_types, "not a video LLM")
    setattr(m, "nframe", ve["frames"])  # vlmeval/inference_video.py: dataset.nframe overrides the model's
    resp = m.generate([{"type": "video", "value": video}, {"type": "text", "value": "Question? Answer:"}], dataset="Video-MME")
    got = json.loads(resp)
    check(got["images"] == ve["frames"] and got["sha256"] == ve["frames_sha256"], "vlmevalkit: the model saw %r, framesweep's frames are %r" % (got, ve))
    check(got["order"] == ["image"] * ve["frames"] + ["text"], "vlmevalkit order %r" % got["order"])
    check(m.inputs[0]["inputs"][0]["key"] == ve["key"], "vlmevalkit key %r" % m.inputs[0])
    try:
        m.generate([{"type": "audio", "value": video}])
        check(False, "audio accepted")
    except AssertionError:
        pass
    out["vlmevalkit"] = {"answer": got, "input": m.inputs[0]["inputs"][0]}
    out["openai_requests"] = len(srv.requests)
    srv.shutdown()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
