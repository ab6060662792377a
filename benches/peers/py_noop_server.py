#!/usr/bin/env python3
"""A one-tool no-op MCP server on the Python SDK (PyPI `mcp==2.3.0`, `MCPServer`), the Python peer
of `--bench mcp_server` (run with the venv `.ci/mcp-peers/install.sh` makes: $SIDEWIRE_MCP_PEERS/py).
The tool takes no arguments and answers the text "ok".

Usage:
  python py_noop_server.py [--tool NAME] [--structured] stdio
  python py_noop_server.py [--tool NAME] [--structured] http PORT [--stateless] [--json]

stdio: newline-delimited JSON-RPC on stdin/stdout; both eras (2025-11-25 initialize and
       2026-07-28 per-request `_meta`, the SDK picks from the first message).
http:  Streamable HTTP at http://127.0.0.1:PORT/mcp (uvicorn). Both eras on the same endpoint: a
       request whose MCP-Protocol-Version header is not a handshake-era version goes to the
       2026-07-28 path. --stateless: legacy era without Mcp-Session-Id (stateless_http=True);
       --json: answer with application/json instead of an SSE stream (json_response=True).
--tool NAME: the tool's name (default `noop`; `test_simple_text` for the client scripts).
--structured: declare the tool `-> str` so the SDK adds outputSchema and structuredContent
       (what a Python author usually writes); the default returns content only, like the TS server.
Logging is at WARNING so per-request access logs do not distort a benchmark.
"""

import argparse

from mcp.server import MCPServer

p = argparse.ArgumentParser()
p.add_argument("--tool", default="noop")
p.add_argument("--structured", action="store_true")
sub = p.add_subparsers(dest="transport", required=True)
sub.add_parser("stdio")
h = sub.add_parser("http")
h.add_argument("port", type=int)
h.add_argument("--stateless", action="store_true")
h.add_argument("--json", action="store_true")
h.add_argument("--host", default="127.0.0.1")
a = p.parse_args()

server = MCPServer("py-noop", version="2.3.0", log_level="WARNING")


def noop() -> str:
    return "ok"


server.tool(name=a.tool, description="Does nothing.", structured_output=a.structured)(noop)

if a.transport == "stdio":
    server.run("stdio")
else:
    server.run(
        "streamable-http",
        host=a.host,
        port=a.port,
        stateless_http=a.stateless,
        json_response=a.json,
    )
