#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API, for bashgate's end-to-end
tests against the real Claude Code CLI. Python 3.11 standard library only.

Two roles, one per process:

  fake_api.py model PORT SCRIPT LOG
      Plays the model for Claude Code. SCRIPT is a JSON file:
          {"steps": [{"tool": "Bash", "input": {"command": "touch x"}}, ...],
           "final": "text of the last answer"}
      A request from Claude Code's main loop (one that offers tools) gets the
      tool call of step N, where N is the number of tool_result blocks already
      in its conversation: one scripted call per turn, in order. Once every
      step has been answered, the turn ends with the final text. Requests that
      offer no tools (titles, summaries, quota probes) get a short text.
      An optional "files": {"/path": "text"} map is served to GET requests:
      what a network command in the test fetches (a payload, a page).

  fake_api.py cop PORT SCRIPT LOG
      Plays bashgate's Cop (an Anthropic-compatible reviewer). SCRIPT:
          {"flag_if_contains": ["exfil"]}
      A request whose user message contains one of the strings gets
      {"flagged": true, ...}, inside a code fence with prose around it (the
      Cop must parse tolerantly); any other gets {"flagged": false, ...}.

Both answer streaming (server-sent events) and non-streaming requests,
count_tokens, and GET/HEAD probes, and append every request they receive to
LOG as one JSON line: {"method", "path", "headers", "body"}. Once listening,
they print the port on stdout.
"""

import json
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Headers worth keeping in the log (never the key itself: its presence is enough).
KEPT_HEADERS = ("anthropic-version", "content-type", "user-agent", "accept")


def new_id(prefix):
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def tool_results(body):
    """Every tool_result block in the conversation, in order."""
    out = []
    for m in body.get("messages") or []:
        content = m.get("content")
        if isinstance(content, list):
            out.extend(c for c in content if isinstance(c, dict) and c.get("type") == "tool_result")
    return out


def user_text(body):
    parts = []
    for m in body.get("messages") or []:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(c.get("text", "") for c in content if isinstance(c, dict))
    return "\n".join(parts)


class Player:
    """Decides the content blocks of one answer: a list of ("text", str) or
    ("tool_use", name, input)."""

    def __init__(self, role, script):
        self.role = role
        self.script = script

    def answer(self, body):
        if self.role == "cop":
            return self.cop(body), "end_turn"
        if not body.get("tools"):
            return [("text", "ok")], "end_turn"
        steps = self.script.get("steps", [])
        n = len(tool_results(body))
        if n < len(steps):
            step = steps[n]
            blocks = []
            if step.get("say"):
                blocks.append(("text", step["say"]))
            blocks.append(("tool_use", step["tool"], step.get("input", {})))
            return blocks, "tool_use"
        return [("text", self.script.get("final", "done"))], "end_turn"

    def cop(self, body):
        text = user_text(body)
        hit = next((s for s in self.script.get("flag_if_contains", []) if s in text), None)
        if hit is not None:
            verdict = {"flagged": True, "reason": f"the command contains {hit!r}"}
            return [("text", f"Review done.\n```json\n{json.dumps(verdict)}\n```\nDeny it.")]
        return [("text", json.dumps({"flagged": False, "reason": "nothing suspicious"}))]


def message(model, blocks, stop):
    content = []
    for b in blocks:
        if b[0] == "text":
            content.append({"type": "text", "text": b[1]})
        else:
            content.append({"type": "tool_use", "id": new_id("toolu"), "name": b[1], "input": b[2]})
    return {
        "id": new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 7,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }


def sse_events(msg):
    """The message as the Messages API streams it."""
    start = dict(msg, content=[], stop_reason=None)
    start["usage"] = dict(msg["usage"], output_tokens=1)
    yield "message_start", {"type": "message_start", "message": start}
    for i, block in enumerate(msg["content"]):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "text", "text": ""}}
            text = block["text"]
            # two deltas, so the client has to join them
            for piece in (text[: len(text) // 2], text[len(text) // 2:]):
                yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "text_delta", "text": piece}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": dict(block, input={})}
            raw = json.dumps(block["input"])
            for piece in (raw[: len(raw) // 2], raw[len(raw) // 2:]):
                yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "input_json_delta", "partial_json": piece}}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": msg["usage"]["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


def make_handler(player, log_path):
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def record(self, body):
            headers = {k: self.headers[k] for k in KEPT_HEADERS if self.headers.get(k)}
            headers["has-api-key"] = bool(self.headers.get("x-api-key"))
            line = json.dumps({"method": self.command, "path": self.path, "headers": headers, "body": body})
            with lock, open(log_path, "a", encoding="utf-8") as f:
                f.write(line + "\n")

        def send_json(self, status, value):
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("request-id", new_id("req"))
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.record(None)
            files = player.script.get("files", {})
            path = self.path.split("?", 1)[0]
            if path not in files:
                return self.send_json(200, {})
            data = files[path].encode()
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_HEAD(self):
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"unparsed": raw.decode("utf-8", "replace")}
            self.record(body)
            path = self.path.split("?", 1)[0]
            if path.endswith("/count_tokens"):
                return self.send_json(200, {"input_tokens": 12})
            if not path.endswith("/v1/messages"):
                return self.send_json(404, {"type": "error",
                                            "error": {"type": "not_found_error", "message": path}})
            blocks, stop = player.answer(body)
            msg = message(body.get("model", "fake"), blocks, stop)
            if not body.get("stream"):
                return self.send_json(200, msg)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for event, data in sse_events(msg):
                self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
            self.close_connection = True

    return Handler


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("model", "cop"):
        sys.exit("usage: fake_api.py model|cop PORT SCRIPT LOG")
    role, port, script_path, log_path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    with open(script_path, encoding="utf-8") as f:
        script = json.load(f)
    server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(Player(role, script), log_path))
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
