#!/usr/bin/env python3
"""A scripted stand-in for the Gemini API (generativelanguage v1beta), for
bashgate's end-to-end tests against the real Gemini CLI. Python 3.11
standard library only.

    fake_gemini.py PORT SCRIPT LOG

SCRIPT is a JSON file:
    {"steps": [{"tool": "run_shell_command", "args": {"command": "ls"}}, ...],
     "final": "text of the last answer"}
A generateContent / streamGenerateContent request that offers tools gets the
function call of step N, where N is the number of functionResponse parts
already in its conversation: one scripted call per turn, in order. After the
last step the turn ends with the final text. Requests without tools (titles,
routing, summaries) get a short text; countTokens gets a count; any GET a
small JSON body, or the text of SCRIPT's "files" map at that path (what a
network command in the test fetches). Every request is appended to LOG as one JSON line
{"method", "path", "body"}. Once listening, it prints the port on stdout.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


def function_responses(body):
    out = []
    for c in body.get("contents") or []:
        for p in c.get("parts") or []:
            if isinstance(p, dict) and "functionResponse" in p:
                out.append(p["functionResponse"])
    return out


def offers_tools(body):
    for t in body.get("tools") or []:
        if t.get("functionDeclarations"):
            return True
    return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script = {}
    log = None

    def log_message(self, *args):
        pass

    def record(self, body):
        with LOCK, open(self.log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path, "body": body}) + "\n")

    def send_json(self, obj, status=200):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.record(None)
        text = self.script.get("files", {}).get(self.path.split("?")[0])
        if text is None:
            return self.send_json({"models": []})
        data = text.encode()
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        self.record(body)
        path = self.path.split("?")[0]
        if path.endswith(":countTokens"):
            return self.send_json({"totalTokens": 10})
        if not (path.endswith(":generateContent") or path.endswith(":streamGenerateContent")):
            return self.send_json({})
        steps = self.script.get("steps", [])
        done = len(function_responses(body))
        if offers_tools(body) and done < len(steps):
            step = steps[done]
            part = {"functionCall": {"name": step["tool"], "args": step.get("args", {})}}
        elif offers_tools(body):
            part = {"text": self.script.get("final", "done")}
        else:
            part = {"text": "{\"reasoning\": \"simple\", \"model_choice\": \"flash\"}"}
        answer = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "gemini-2.5-pro",
        }
        if path.endswith(":streamGenerateContent"):
            data = ("data: " + json.dumps(answer) + "\r\n\r\n").encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self.send_json(answer)


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
