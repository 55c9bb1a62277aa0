"""A stand-in OpenAI-compatible /v1/chat/completions server for the adapter tests: it decodes every
image it is sent with Pillow (an independent PNG decoder) and answers with what it received (image
count, sha256 of the RGB bytes in order and of each image's, the texts), so the test can check that the frames a model
would see are framesweep's, byte for byte. The real openai runtime path is tested against ollama in
llm/openai."""

import base64
import hashlib
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from PIL import Image


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "prompt_logprobs" in body:
            return self._prompt_logprobs(body)
        h = hashlib.sha256()
        images, texts, order, each = 0, [], [], []
        for part in body["messages"][0]["content"]:
            if part["type"] == "text":
                texts.append(part["text"])
                order.append("text")
            else:
                url = part["image_url"]["url"]
                head, b64 = url.split(",", 1)
                img = Image.open(io.BytesIO(base64.b64decode(b64)))
                img.load()
                if head == "data:image/png;base64":
                    assert img.format == "PNG" and img.mode == "RGB", (img.format, img.mode)
                rgb = img.convert("RGB").tobytes()
                h.update(rgb)
                each.append(hashlib.sha256(rgb).hexdigest())
                images += 1
                order.append("image")
        self.server.requests.append(body)
        answer = {"images": images, "sha256": h.hexdigest(), "image_sha256": each, "texts": texts, "order": order,
                  "temperature": body.get("temperature"), "max_tokens": body.get("max_tokens"), "stop": body.get("stop")}
        out = json.dumps({"id": "x", "object": "chat.completion", "model": body["model"],
                          "choices": [{"index": 0, "message": {"role": "assistant", "content": json.dumps(answer)}, "finish_reason": "stop"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


    def _prompt_logprobs(self, body):
        """vLLM's prompt_logprobs=0 on chat completions, with a toy tokenizer: one token per character
        of each text, one per image. Model "no-logprobs" answers without them (a server that lacks them)."""
        self.server.requests.append(body)
        n = prompt_tokens(body)
        out = {"id": "x", "object": "chat.completion", "model": body["model"], "usage": {"prompt_tokens": n, "completion_tokens": 1},
               "choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "length"}]}
        if body["model"] != "no-logprobs":
            out["prompt_logprobs"] = [None] + [{str(1000 + i): {"logprob": token_logprob(i), "rank": token_rank(i), "decoded_token": "?"}} for i in range(1, n)]
        b = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)


def prompt_tokens(body):
    """The toy tokenizer's prompt length: one token per character of each text, one per image."""
    n = 0
    for m in body["messages"]:
        c = m["content"]
        if isinstance(c, str):
            n += len(c)
        else:
            n += sum(len(p["text"]) if p["type"] == "text" else 1 for p in c)
    return n


def token_logprob(i):
    """The stand-in's logprob of prompt token i (1-based position)."""
    return -((i % 5) + 1) / 10.0


def token_rank(i):
    return 2 if i % 11 == 0 else 1


def plain_answer(parts, gen_kwargs):
    """An answer= callable with no loglikelihood (a backend that cannot score continuations)."""
    return "A"


def start():
    """Serve on 127.0.0.1 (an ephemeral port) in a thread; returns (server, api_base)."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.requests = []
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, "http://127.0.0.1:%d/v1" % srv.server_address[1]
