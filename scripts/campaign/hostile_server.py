#!/usr/bin/env python3
"""A hostile OpenAI-compatible server on 127.0.0.1 for scripts/campaign/replies.sh.

usage: hostile_server.py STATE_DIR [OTHER_PORT]

Prints its port on stdout, then answers GET /v1/models with model "m" and each POST
/v1/chat/completions by the case its question names ("case-NAME", see REPLIES and handle()). It
appends each chat request's arrival time to STATE_DIR/arrivals and keeps the most requests it had
in flight at once in STATE_DIR/peak. A 429 case answers 200 once STATE_DIR/healthy exists. A
redirect case sends the client to OTHER_PORT (another server: its requests are counted there).
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OK = {"choices": [{"message": {"role": "assistant", "content": "A"},
                   "logprobs": {"content": [{"token": "A", "logprob": -0.1,
                                             "top_logprobs": [{"token": "A", "logprob": -0.1},
                                                              {"token": "B", "logprob": -2.4}]}]},
                   "finish_reason": "stop"}],
      "usage": {"prompt_tokens": 40, "completion_tokens": 1}}

# Replies that are JSON but no chat completion a client can take.
REPLIES = {
    "text": {"choices": [{"text": "A", "index": 0}]},
    "emptychoice": {"choices": [{}]},
    "nullchoice": {"choices": [None]},
    "nullcontent": {"choices": [{"message": {"role": "assistant", "content": None}}]},
    "nochoices": {"choices": []},
    "negcount": {"choices": [{"message": {"content": "A"}}], "usage": {"prompt_tokens": -5, "completion_tokens": 1}},
    "nulllogprob": {"choices": [{"message": {"content": "A"},
                                 "logprobs": {"content": [{"token": "A", "logprob": None, "top_logprobs": []}]}}]},
    "poslogprob": {"choices": [{"message": {"content": "A"},
                                "logprobs": {"content": [{"token": "A", "logprob": 0.7,
                                                          "top_logprobs": [{"token": "A", "logprob": 0.7}]}]}}]},
    # Ambiguous JSON (sent as written): a key twice (a Go decoder takes the last), a key in capitals
    # (a Go decoder matches it to "choices" regardless of case).
    "dupkey": '{"choices":[{"message":{"content":"A"}}],"choices":[{"message":{"content":"B"}}]}',
    "casekey": '{"CHOICES":[{"message":{"content":"B"}}]}',
}

state = sys.argv[1]
other = sys.argv[2] if len(sys.argv) > 2 else ""
lock = threading.Lock()
inflight = 0
peak = 0


def case_of(body):
    i = body.find(b"case-")
    if i < 0:
        return ""
    j = i + 5
    while j < len(body) and (chr(body[j]).isalnum()):
        j += 1
    return body[i + 5:j].decode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, obj, headers=()):
        b = obj.encode() if isinstance(obj, str) else json.dumps(obj).encode()
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        self.send(200, {"object": "list", "data": [{"id": "m"}]})

    def do_POST(self):
        global inflight, peak
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            with open(os.path.join(state, "arrivals"), "a") as f:
                f.write("%.6f\n" % time.time())
            inflight += 1
            peak = max(peak, inflight)
            with open(os.path.join(state, "peak"), "w") as f:
                f.write(str(peak))
        try:
            self.handle_case(case_of(body))
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            with lock:
                inflight -= 1

    def handle_case(self, case):
        if case in REPLIES:
            self.send(200, REPLIES[case])
        elif case == "ratelimited" and not os.path.exists(os.path.join(state, "healthy")):
            self.send(429, {"error": {"message": "rate limit exceeded"}}, [("Retry-After", "1")])
        elif case == "redirect":
            self.send(307, {}, [("Location", "http://127.0.0.1:%s/v1/chat/completions" % other)])
        elif case == "huge":  # 100 MB of one answer's text
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"choices":[{"message":{"content":"')
            chunk = b"A" * (1 << 16)
            for _ in range((100 << 20) // len(chunk)):
                self.wfile.write(chunk)
            self.wfile.write(b'"}}]}')
        elif case == "stall":  # never answers (until the client goes)
            time.sleep(120)
        elif case == "slow":  # answers after 0.5 s: requests overlap as much as the client lets them
            time.sleep(0.5)
            self.send(200, OK)
        else:
            self.send(200, OK)


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
print(srv.server_address[1], flush=True)
srv.serve_forever()
