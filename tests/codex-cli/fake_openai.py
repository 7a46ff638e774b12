#!/usr/bin/env python3
"""A scripted stand-in for the OpenAI Responses API, for bashgate's
end-to-end tests against the real Codex CLI. Python 3.11 standard library.

    fake_openai.py PORT SCRIPT LOG

SCRIPT: {"steps": [{"command": "ls"}, ...], "final": "text", "files": {"/p": "text"}}
A POST to .../responses answers (as server-sent events) with the shell call
of step N, N being the number of tool outputs already in its input, in
whatever shape the request's shell tool takes (`shell`: a word list,
`exec_command`: `cmd`, `shell_command`: `command`); after the last step, the
final text. GETs are answered from "files" (what a network command in the
test fetches), else a small JSON body. Every request is appended to LOG as
one JSON line {"method", "path", "body"}. Prints the port once listening.
"""

import json
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


def outputs(body):
    items = body.get("input") or []
    return [i for i in items if isinstance(i, dict) and i.get("type", "").endswith("_output")]


def shell_call(body, command):
    names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    call_id = "call_" + uuid.uuid4().hex[:12]
    if "shell" in names:
        args = {"command": ["bash", "-lc", command]}
        name = "shell"
    elif "exec_command" in names:
        args = {"cmd": command}
        name = "exec_command"
    elif "shell_command" in names:
        args = {"command": command}
        name = "shell_command"
    else:
        return {"type": "message", "role": "assistant", "id": "msg_" + uuid.uuid4().hex[:8],
                "content": [{"type": "output_text", "text": "no shell tool offered: %s" % sorted(n for n in names if n)}]}
    return {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:8], "call_id": call_id,
            "name": name, "arguments": json.dumps(args)}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script = {}
    log = None

    def log_message(self, *args):
        pass

    def record(self, body):
        with LOCK, open(self.log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path, "body": body}) + "\n")

    def send_body(self, data, ctype):
        self.send_response(200)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.record(None)
        text = self.script.get("files", {}).get(self.path.split("?")[0])
        if text is None:
            return self.send_body(json.dumps({"data": [], "models": []}).encode(), "application/json")
        self.send_body(text.encode(), "text/plain")

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        self.record(body)
        if not self.path.split("?")[0].endswith("/responses"):
            return self.send_body(b"{}", "application/json")
        steps = self.script.get("steps", [])
        done = len(outputs(body))
        if done < len(steps):
            item = shell_call(body, steps[done]["command"])
        else:
            item = {"type": "message", "role": "assistant", "id": "msg_" + uuid.uuid4().hex[:8],
                    "content": [{"type": "output_text", "text": self.script.get("final", "done")}]}
        rid = "resp_" + uuid.uuid4().hex[:12]
        events = [
            ("response.created", {"type": "response.created", "response": {"id": rid}}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": {
                "id": rid, "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                                     "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                                     "total_tokens": 15}}}),
        ]
        data = "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()
        self.send_body(data, "text/event-stream")


def main():
    port, script, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    with open(script) as f:
        Handler.script = json.load(f)
    Handler.log = log
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
