"""Drives one MCP server over stdio and records the exact bytes of every answer line.

    python3 drive.py OUT_PREFIX -- COMMAND [ARG...]

Two sessions, each a fresh server process:

- legacy (2025-11-25): `initialize`, `notifications/initialized`, `tools/list`, `tools/call`;
- modern (2026-07-28): `server/discover`, then `tools/list` and `tools/call` with the `_meta`
  envelope on each request.

Each answer is written byte for byte (its newline included) to
`OUT_PREFIX.<method>[.modern].json`; notifications, stderr and a summary go to this script's
stderr. A server that refuses `server/discover` (an error answer, or none within the timeout)
gets no modern files, and the summary says so. The `tools/call` lines are what sidewire's
client writes (the bench's `FLOOR_LEGACY` and `FLOOR_MODERN`), so the answers are the ones
that server writes to sidewire.
"""

import json
import os
import select
import subprocess
import sys

TIMEOUT = 20.0
MODERN = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "sidewire", "version": "0.1.0"},
}

LEGACY = [
    ("initialize", {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "sidewire", "version": "0.1.0"},
        },
    }),
    (None, {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ("tools_list", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ("tools_call", {
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "noop", "_meta": {"progressToken": "sidewire-7"}},
    }),
]

MODERN_SESSION = [
    ("discover", {
        "jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": ENVELOPE},
    }),
    ("tools_list.modern", {
        "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": ENVELOPE},
    }),
    ("tools_call.modern", {
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "noop", "_meta": dict({"progressToken": "sidewire-7"}, **ENVELOPE)},
    }),
]


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class Server:
    def __init__(self, command):
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.pending = b""

    def send(self, message):
        line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        self.process.stdin.write(line)
        self.process.stdin.flush()

    def read_line(self):
        """The next line from stdout, its newline included, or None on EOF or timeout."""
        out = self.process.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([out], [], [], TIMEOUT)
            if not ready:
                return None
            chunk = os.read(out, 65536)
            if not chunk:
                return None
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line + b"\n"

    def answer(self, request_id):
        """The answer line to `request_id`; anything else on the way is logged."""
        while True:
            line = self.read_line()
            if line is None:
                return None
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return line
            log("  (other) " + line.decode().rstrip("\n"))

    def close(self):
        self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        stderr = self.process.stderr.read().decode(errors="replace").strip()
        if stderr:
            log("  stderr: " + stderr.replace("\n", "\n          "))


def session(prefix, command, steps):
    server = Server(command)
    try:
        for name, request in steps:
            server.send(request)
            if name is None:
                continue
            line = server.answer(request["id"])
            if line is None:
                log(f"  {name}: no answer within {TIMEOUT} s")
                return False
            log(f"  {name}: {line.decode().rstrip()}")
            if "error" in json.loads(line):
                log(f"  {name}: an error answer; the session stops here")
                return False
            with open(f"{prefix}.{name}.json", "wb") as out:
                out.write(line)
        return True
    finally:
        server.close()


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    prefix, command = sys.argv[1], sys.argv[3:]
    log(f"legacy session: {' '.join(command)}")
    if not session(prefix, command, LEGACY):
        sys.exit("the legacy session failed")
    log(f"modern session: {' '.join(command)}")
    if not session(prefix, command, MODERN_SESSION):
        log("no modern era: nothing written for it")
        for name, _ in MODERN_SESSION:
            path = f"{prefix}.{name}.json"
            if os.path.exists(path):
                os.remove(path)


if __name__ == "__main__":
    main()
