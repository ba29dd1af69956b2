#!/usr/bin/env python3
"""A scripted model server on loopback for the llm backends' tests: a real HTTP server that
speaks the Anthropic Messages API (POST /v1/messages) and the OpenAI chat-completions API
(POST /chat/completions, /v1/chat/completions), answering from a script instead of a model.

The script (JSON) maps an operator to the answers its questions get, in order, the last one
repeated; an operator is read from the prompt's "Operator: <name>" line, and "*" serves any
operator the script does not name:

    {"relu.default": [{"text": "```cpp\\n...\\n```"}, {"text": "..."}],
     "*": [{"status": 429, "headers": {"retry-after": "1"}}, {"text": "..."}]}

An answer is {"text": ...} (a 200 in the API's shape, with token counts), or any of: "status"
(an error status with the API's error body; "error_type", "error_code" and "message" fill it),
"headers", "raw" (this body as it is: malformed JSON), "delay" (seconds before answering).

Every request is appended to --log as one JSON line: path, the operator, whether a key header
came and its length (never the key), the body.
"""
import argparse
import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--script", required=True)
parser.add_argument("--port-file", required=True, help="written with the port once listening")
parser.add_argument("--log", required=True)
arguments = parser.parse_args()

with open(arguments.script) as f:
    script = json.load(f)
served = {}  # operator -> answers given
lock = threading.Lock()


def answer_for(operator):
    with lock:
        answers = script.get(operator) or script.get("*") or [{"status": 500, "message": "no script for " + operator}]
        index = served.get(operator, 0)
        served[operator] = index + 1
        return answers[min(index, len(answers) - 1)]


def success_body(anthropic, text, request):
    tokens_in = len(json.dumps(request)) // 4
    tokens_out = max(1, len(text) // 4)
    if anthropic:
        return {"id": "msg_scripted", "type": "message", "role": "assistant", "model": request.get("model"),
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "model": request.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": tokens_in + tokens_out}}


def error_body(anthropic, answer):
    kind = answer.get("error_type", "api_error")
    message = answer.get("message", "scripted error")
    if anthropic:
        error = {"type": kind, "message": message}
        if "error_code" in answer:
            error["details"] = {"error_code": answer["error_code"]}
        return {"type": "error", "error": error}
    return {"error": {"message": message, "type": kind, "code": answer.get("error_code")}}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        raw = self.rfile.read(length)
        anthropic = self.path.endswith("/v1/messages")
        if not anthropic and not self.path.endswith("/chat/completions"):
            self.send_response(404)
            self.end_headers()
            return
        try:
            request = json.loads(raw)
        except ValueError:
            request = {}
        prompt = " ".join(m.get("content", "") for m in request.get("messages", []) if isinstance(m.get("content"), str))
        found = re.search(r"^Operator: (\S+)", prompt, re.M)
        operator = found.group(1) if found else "?"
        key = self.headers.get("x-api-key") or (self.headers.get("authorization") or "").removeprefix("Bearer ")
        with lock, open(arguments.log, "a") as log:
            log.write(json.dumps({"path": self.path, "operator": operator, "key_sent": bool(key), "key_length": len(key),
                                  "anthropic_version": self.headers.get("anthropic-version"), "body": request}) + "\n")
        answer = answer_for(operator)
        if answer.get("delay"):
            time.sleep(answer["delay"])
        status = answer.get("status", 200)
        if "raw" in answer:
            body = answer["raw"].encode()
        elif status == 200:
            body = json.dumps(success_body(anthropic, answer.get("text", ""), request)).encode()
        else:
            body = json.dumps(error_body(anthropic, answer)).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            for name, value in answer.get("headers", {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout): what a slow server sees


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(arguments.port_file + ".partial", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(arguments.port_file + ".partial", arguments.port_file)
server.serve_forever()
