"""Drives one extension sidecar (Extension Protocol v1) over stdio and records the exact bytes
of its answers.

    python3 drive_ext.py OUT_PREFIX -- COMMAND [ARG...]

Sends what sidewire's host sends at boot and for one intercept: `extension/initialize` (the
reference host's first frame), `extension/initialized`, one `input.receive` intercept (the
intercept bench's payload) and `extension/shutdown`. Each answer is written byte for byte (its
newline included) to `OUT_PREFIX.<initialize|intercept|shutdown>.json`.
"""

import sys

from drive import Server, log

STEPS = [
    ("initialize", {
        "jsonrpc": "2.0", "id": 1, "method": "extension/initialize",
        "params": {
            "protocolId": "reasonix.extension.v1",
            "protocolVersion": "1",
            "manifest": {"intercepts": ["input.receive"], "capabilities": ["interceptors"]},
            "session": {
                "sessionId": "5d9d21234425b47b3c28c573dc8144a9",
                "workspaceRoot": "/home/user/project",
                "generation": 1,
            },
            "capabilities": {"contentRefs": True, "uiHost": "headless", "protocolVersion": "1"},
        },
    }),
    (None, {"jsonrpc": "2.0", "method": "extension/initialized", "params": {}}),
    ("intercept", {
        "jsonrpc": "2.0", "id": 2, "method": "extension/intercept",
        "params": {
            "event": "input.receive",
            "seq": 1,
            "payload": {"text": "fix teh tests in the parser module please"},
            "timeoutMillis": 5000,
        },
    }),
    ("shutdown", {
        "jsonrpc": "2.0", "id": 3, "method": "extension/shutdown",
        "params": {"timeoutMillis": 1000},
    }),
]


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    prefix, command = sys.argv[1], sys.argv[3:]
    server = Server(command)
    try:
        for name, request in STEPS:
            server.send(request)
            if name is None:
                continue
            line = server.answer(request["id"])
            if line is None:
                sys.exit(f"{name}: no answer")
            log(f"  {name}: {line.decode().rstrip()}")
            with open(f"{prefix}.{name}.json", "wb") as out:
                out.write(line)
    finally:
        server.close()
    log(f"  exit status: {server.process.returncode}")


if __name__ == "__main__":
    main()
