#!/usr/bin/env python3
"""The seed's command classifier, as the baseline for batch throughput.

The seed documents (../shared/seeds/, the implementation plan) classify a
command with regular expressions and three word lists: split the text at
`|`, `||`, `&&`, `;` and `$(`, drop leading NAME=value words from each
piece, and look the first word of each piece up. A multi-word pattern
anywhere in the text, or a network word, makes it "network"; a word on no
list makes it "unknown"; otherwise "safe". This file follows that
description in our own code, so docs/performance.md can compare bashgate's
`analyze --jsonl` with it as a whole process on the same input.

Usage: seed_classifier.py < commands.jsonl > verdicts.jsonl
Each input line is a JSON object with "command"; it is written back with
"verdict" added, as `bashgate analyze --jsonl` does.
"""

import json
import re
import sys

LOCAL = frozenset(
    """awk base64 basename bc cal cat column comm cut date df diff dirname du
    echo expand expr fd file find fmt fold free grep head hexdump id iconv jq
    less locale ls lscpu md5sum mktemp nl nproc od paste pwd readelf realpath
    rev rg sed seq sha256sum sort stat strings tac tail tr tree type uname
    unexpand uniq uptime wc which whoami xargs xxd""".split()
)
NETWORK_WORDS = frozenset(
    """curl wget nc netcat ncat telnet ssh scp sftp rsync nslookup dig host
    ping traceroute python python3 node ruby perl php""".split()
)
NETWORK_PHRASES = (
    "apt-get install",
    "apt install",
    "pip install",
    "npm install",
    "yarn add",
    "cargo install",
    "bash -c",
    "sh -c",
)
SEPARATORS = re.compile(r"\s*(?:\|\||&&|[|;]|\$\()\s*")
ASSIGNMENTS = re.compile(r"^(?:\s*\w+=\S*\s+)+")


def first_words(command):
    words = []
    for piece in SEPARATORS.split(command):
        piece = ASSIGNMENTS.sub("", piece.strip()).strip()
        parts = piece.split()
        if parts:
            words.append(parts[0])
    return words


def classify(command):
    command = command.strip()
    if not command:
        return "unknown"
    lowered = command.lower()
    if any(phrase in lowered for phrase in NETWORK_PHRASES):
        return "network"
    words = first_words(command)
    if not words:
        return "unknown"
    verdict = "safe"
    for word in words:
        if word in NETWORK_WORDS:
            return "network"
        if word not in LOCAL:
            verdict = "unknown"
    return verdict


def main():
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        record = json.loads(line)
        record["verdict"] = classify(record.get("command", ""))
        out.write(json.dumps(record))
        out.write("\n")


if __name__ == "__main__":
    main()
