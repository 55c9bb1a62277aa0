"""Run by cmd/framesweep's TestServeBinary: the lmms-eval adapter, found through the installed
`lmms_eval.models` entry point by the (stand-in) registry, and the VLMEvalKit class, driven as their
harnesses drive them, against a real `framesweep serve` and a stand-in OpenAI-compatible server that
reports what images it received; with their default loaders, the images equal what the harnesses' own
readers return (oracle_frames). Prints a JSON summary; exits 1 on a failed check."""

import json
import logging
import os
import sys

import openai_standin


def check(cond, msg):
    if not cond:
        print("FAIL: " + msg, file=sys.stderr)
        sys.exit(1)


class Logs(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def lmms_eval_more(cls, url, token_file, video, api_base, srv, Instance):
    """The evaluator's extra model args, the default loader, loglikelihood (prompt logprobs or a refusal
    naming the task)."""
    from framesweep_client import Client

    logs = Logs()
    logging.getLogger("framesweep").addHandler(logs)
    logging.getLogger("framesweep").setLevel(logging.INFO)
    client = Client(url, token_file=token_file or None)
    # lmms-eval's evaluator: create_from_arg_string(model_args, {"batch_size", "max_batch_size", "device"}).
    args = "url=%s,token_file=%s,frames=8,api_base=%s,api_model=test-model" % (url, token_file, api_base)
    model = cls.create_from_arg_string(args, {"batch_size": 1, "max_batch_size": 4, "device": "cuda:0"})
    check(any("max_batch_size=4 ignored" in l for l in logs.lines) and any("device='cuda:0' ignored" in l for l in logs.lines),
          "ignored model args not logged: %r" % logs.lines)
    check(model.config == {"loader": "lmms-eval", "frames": 8}, "default config %r" % model.config)
    try:
        cls.create_from_arg_string(args + ",max_num_frame=8")
        check(False, "a misspelt model arg was accepted")
    except TypeError as e:
        check("max_num_frame" in str(e), str(e))
    model.task_dict = {"videomme": {"test": {0: {"path": video, "answer": "B"}}}}
    gen = {"until": ["\n\n"], "max_new_tokens": 8, "temperature": 0, "do_sample": False}
    (resp,) = model.generate_until([Instance("generate_until", ("Q?", gen, lambda doc: [doc["path"]], 0, "videomme", "test"), 0)])
    sent = model.request_config()
    if "lmms-eval" in client.loaders():  # a server that builds loaders gets the loader itself
        check(sent == {"loader": "lmms-eval", "frames": 8}, "sent %r" % sent)
    else:  # an older server: the preset with the same indices, and a warning
        check(sent == {"preset": "lmms-eval", "frames": 8}, "sent %r" % sent)
        check(any("has no 'lmms-eval' loader" in l for l in logs.lines), "no warning: %r" % logs.lines)
    want, _ = client.frames(video, **sent)
    from framesweep_client import sha256_of

    check(json.loads(resp)["sha256"] == sha256_of(want) and json.loads(resp)["images"] == len(want), "default-loader frames %r" % resp)

    # loglikelihood through prompt logprobs (vLLM's prompt_logprobs=0, continue_final_message).
    req = Instance("loglikelihood", ("Which letter?", lambda doc: doc["answer"], lambda doc: [doc["path"]], 0, "videomme", "test"), 0)
    n0 = len(srv.requests)
    ((ll, greedy),) = model.loglikelihood([req])
    base, full = srv.requests[n0], srv.requests[n0 + 1]
    check(full["messages"][-1] == {"role": "assistant", "content": "B"} and full["continue_final_message"] and not full["add_generation_prompt"]
          and full["prompt_logprobs"] == 0 and base["messages"][-1]["content"] == "", "loglikelihood requests %r" % full["messages"][-1])
    n = openai_standin.prompt_tokens(full)
    k = n - openai_standin.prompt_tokens(base)
    check(k == 1, "continuation tokens %d" % k)
    want_ll = sum(openai_standin.token_logprob(i) for i in range(n - k, n))
    want_greedy = all(openai_standin.token_rank(i) == 1 for i in range(n - k, n))
    check(abs(ll - want_ll) < 1e-12 and greedy == want_greedy, "loglikelihood %r %r, want %r %r" % (ll, greedy, want_ll, want_greedy))
    check(model.cache_hook.partials[-1][0] == "loglikelihood", "cache hook")
    for bad_args in ("api_base=%s,api_model=no-logprobs" % api_base, "answer=openai_standin:plain_answer"):
        m2 = cls.create_from_arg_string("url=%s,token_file=%s,frames=8,%s" % (url, token_file, bad_args))
        m2.task_dict = model.task_dict
        try:
            m2.loglikelihood([req])
            check(False, "loglikelihood without prompt logprobs did not refuse")
        except NotImplementedError as e:
            check("'videomme'" in str(e), "the refusal does not name the task: %s" % e)
    logging.getLogger("framesweep").removeHandler(logs)
    return {"sent": sent, "loglikelihood": [ll, greedy]}


def vlmevalkit_runner(url, token_file, video, api_base, ve):
    """One registration (no nframe/fps given) through the stand-in runner: an nframe dataset, then an
    fps dataset; each gets its own budget, under the default vlmevalkit loader."""
    from framesweep_client import Client, sha256_of
    from framesweep_client.vlmevalkit_model import FramesweepVideoLLM
    from vlmeval.dataset import VideoDataset
    from vlmeval.inference_video import infer_data

    client = Client(url, token_file=token_file or None)
    m = FramesweepVideoLLM(url=url, token_file=token_file or None, api_base=api_base, api_model="test-model", resolution=ve["resolution"])
    check(m.request_config() == {"loader": "vlmevalkit", "resolution": ve["resolution"]}, "vlmevalkit default config %r" % m.request_config())
    out = {}
    nf = VideoDataset("Video-MME_%dframe" % ve["frames"], [video], nframe=ve["frames"])
    for ds in (nf, VideoDataset("Video-MME_1fps", [video], fps=1.0), nf):  # run.py passes one model object along
        (resp,) = infer_data(m, "framesweep", ds).values()
        got = json.loads(resp)
        budget = {"frames": ds.nframe} if ds.nframe > 0 else {"sample_fps": ds.fps}
        want, _ = client.frames(video, **m.request_config(), **budget)
        check(m.inputs[-1]["inputs"][0]["budget"] == budget, "%s: budget %r" % (ds.dataset_name, m.inputs[-1]["inputs"][0]["budget"]))
        check(got["images"] == len(want) and got["sha256"] == sha256_of(want), "%s: the model saw %r" % (ds.dataset_name, got))
        out[ds.dataset_name] = {"images": got["images"]}
        check(m.nframe and m.fps, "after %s the model cannot take the next dataset's budget: nframe %r fps %r" % (ds.dataset_name, m.nframe, m.fps))
    check(out["Video-MME_1fps"]["images"] == 13, "1 fps on a 13 s video: %r" % out)
    if ve["frames"] == 6:
        check(out["Video-MME_6frame"]["images"] == 6, "%r" % out)
    return out


def oracle_frames(cls, url, token_file, api_base, oracle):
    """The frames each adapter hands its model, as the (stand-in) answering server decodes them, image
    by image, against the frames the harness's own reader returns: lmms-eval's read_video run by the
    Go test as an oracle (../shared/oracles, unmodified), and for VLMEvalKit the vlmevalkit loader's
    frames (decord does not install here). Both adapters run with their defaults (no resolution)."""
    from framesweep_client.vlmevalkit_model import FramesweepVideoLLM
    from lmms_eval.api.instance import Instance
    from vlmeval.dataset import VideoDataset
    from vlmeval.inference_video import infer_data

    out = {"lmms_eval": [], "vlmevalkit": []}
    gen = {"until": ["\n\n"], "max_new_tokens": 8, "temperature": 0, "do_sample": False}
    for case in oracle["lmms_eval"]:
        model = cls.create_from_arg_string("url=%s,token_file=%s,frames=%d,api_base=%s,api_model=test-model" % (url, token_file, case["frames"], api_base))
        model.task_dict = {"videomme": {"test": {0: {"path": case["video"]}}}}
        (resp,) = model.generate_until([Instance("generate_until", ("Q?", gen, lambda doc: [doc["path"]], 0, "videomme", "test"), 0)])
        got = json.loads(resp)
        check(model.request_config() == {"loader": "lmms-eval", "frames": case["frames"]}, "lmms-eval sent %r" % model.request_config())
        check(got["image_sha256"] == case["frame_sha256"], "lmms-eval %s frames=%d: the model got %d images %r, read_video returns %d %r"
              % (case["video"], case["frames"], got["images"], got["image_sha256"][:2], len(case["frame_sha256"]), case["frame_sha256"][:2]))
        out["lmms_eval"].append([os.path.basename(case["video"]), case["frames"], got["images"]])
    for case in oracle["vlmevalkit"]:
        m = FramesweepVideoLLM(url=url, token_file=token_file or None, api_base=api_base, api_model="test-model")
        (resp,) = infer_data(m, "framesweep", VideoDataset("Video-MME_%dframe" % case["frames"], [case["video"]], nframe=case["frames"])).values()
        got = json.loads(resp)
        check(m.request_config() == {"loader": "vlmevalkit"}, "vlmevalkit sent %r" % m.request_config())
        check(got["image_sha256"] == case["frame_sha256"], "vlmevalkit %s nframe=%d: the model got %d images, the loader returns %d"
              % (case["video"], case["frames"], got["images"], len(case["frame_sha256"])))
        out["vlmevalkit"].append([os.path.basename(case["video"]), case["frames"], got["images"]])
    return out


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
    try:
        model.generate_until_multi_round([req])
        check(False, "generate_until_multi_round did not refuse")
    except NotImplementedError:
        pass
    out["lmms_eval"] = {"answer": got, "input": inp}
    out["lmms_eval_more"] = lmms_eval_more(cls, url, token_file, video, api_base, srv, Instance)

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
    out["vlmevalkit_runner"] = vlmevalkit_runner(url, token_file, video, api_base, ve)
    if "oracle" in exp:
        out["oracle"] = oracle_frames(cls, url, token_file, api_base, exp["oracle"])
    out["openai_requests"] = len(srv.requests)
    srv.shutdown()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
