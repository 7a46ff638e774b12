#!/usr/bin/env python3
"""A receiver for bashgate's approval webhook: shows each pending approval
where you are looking.

Run it on the host and point the daemon at it:

    python3 docs/examples/approval-webhook.py 127.0.0.1:9000
    # the daemon's configuration:  [serve] webhook_url = "http://127.0.0.1:9000/"

Each approval is printed, and shown as a desktop notice when `notify-send`
is there. To forward it elsewhere (a chat channel, a phone), replace
`tell()`; the body's fields are in docs/containers.md.
"""
import json
import shutil
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


def tell(a: dict) -> None:
    what = a.get("command") or f"a {a.get('tool')} call"
    text = f"{what}\n{a.get('reason', '')}\n{a.get('approve')}   or   {a.get('deny')}"
    print(f"approval {a.get('id')} for session {a.get('session')}:\n  " + text.replace("\n", "\n  "), flush=True)
    if shutil.which("notify-send"):
        subprocess.run(["notify-send", "--app-name=bashgate", "bashgate: a command waits for your answer", text], check=False)


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(min(size, 1 << 20)))
        except ValueError:
            self.send_response(400)
            self.end_headers()
            return
        if body.get("event") == "approval_pending":
            tell(body)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args) -> None:  # quiet: tell() says what matters
        pass


def main() -> None:
    host, _, port = (sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9000").rpartition(":")
    HTTPServer((host or "127.0.0.1", int(port)), Receiver).serve_forever()


if __name__ == "__main__":
    main()
