#!/usr/bin/env python3
"""The attacker's end of a reverse shell, for bashgate's end-to-end tests.
Python 3.11 standard library only.

usage: attacker_listener.py PORT LOG

Listens on 127.0.0.1:PORT. Whoever connects is sent shell commands that leave
a file named `revshell-pwned` in the shell's working directory, as an attacker
driving a reverse shell would; each connection is appended to LOG as a JSON
line. A test that finds no file and an empty LOG knows the reverse shell never
connected. Prints the port on stdout once listening.
"""

import json
import socketserver
import sys
import time

COMMANDS = b"touch revshell-pwned\nexit\n"


def make_handler(log_path):
    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            with open(log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"peer": self.client_address[0], "at": time.time()}) + "\n")
            self.request.sendall(COMMANDS)
            self.request.settimeout(5)
            try:
                while self.request.recv(4096):
                    pass
            except OSError:
                pass

    return Handler


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: attacker_listener.py PORT LOG")
    socketserver.ThreadingTCPServer.allow_reuse_address = True
    server = socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), make_handler(sys.argv[2]))
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
